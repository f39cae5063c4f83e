// Canvas plots: a scatterplot coloured by a local measure or by label, and a line chart of
// scores across k. No dependencies; sized for the device pixel ratio.

/** Viridis, as a degree-6 polynomial (Matt Zucker's fit); t in [0, 1] → [r, g, b] in 0–255. */
export function viridis(t) {
  t = Math.min(1, Math.max(0, t));
  const c = [
    [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
    [0.1050930431085774, 1.404613529898575, 1.384590162594685],
    [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
    [-4.634230498983486, -5.799100973351585, -19.33244095627987],
    [6.228269936347081, 14.17993336680509, 56.69055260068105],
    [4.776384997670288, -13.74514537774601, -65.35303263337234],
    [-5.435455855934631, 4.645852612178535, 26.3124352495832],
  ];
  return [0, 1, 2].map((ch) => {
    let v = c[6][ch];
    for (let i = 5; i >= 0; i--) v = v * t + c[i][ch];
    return Math.round(255 * Math.min(1, Math.max(0, v)));
  });
}

export const CATEGORICAL = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#1f77b4', '#aec7e8', '#ff7f0e', '#98df8a', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];

/** CSS linear-gradient of viridis, for legends. */
export function viridisGradient() {
  const stops = [];
  for (let i = 0; i <= 10; i++) stops.push(`rgb(${viridis(i / 10).join(',')}) ${i * 10}%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

function fitCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(50, canvas.clientWidth);
  const h = Math.max(50, canvas.clientHeight);
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, w, h };
}

function extent(a) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of a) {
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return [lo, hi];
}

/** A diverging blue–white–red scale for t in [0, 1] (0.5 white), for signed values. */
export function diverging(t) {
  const u = Math.max(0, Math.min(1, t));
  const [a, b, s] = u < 0.5 ? [[33, 102, 172], [247, 247, 247], u * 2] : [[247, 247, 247], [178, 24, 43], (u - 0.5) * 2];
  return a.map((c, k) => Math.round(c + (b[k] - c) * s));
}

/** CSS linear-gradient of the diverging scale, for legends. */
export function divergingGradient() {
  const stops = [];
  for (let i = 0; i <= 10; i++) stops.push(`rgb(${diverging(i / 10).join(',')}) ${i * 10}%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

/**
 * Scatterplot of points (x, y) with equal axis scales.
 * colour: {kind: 'value', values, min, max, scale?: 'sequential' | 'diverging', top?: 'low' | 'high' | 'far'}
 *       | {kind: 'label', labels, classes: Map(label → index)} | {kind: 'none'}
 * A value that is not finite (a point without one: `null` in the results) is drawn as a grey
 * ring, under the others. `top` picks which values are drawn last: 'low' (default: the poorly
 * kept points of a score), 'high' (the largest parts of a sum or share), 'far' (the values
 * farthest from the middle of a diverging scale).
 * Returns {sx, sy} (CSS-pixel screen positions) for hover look-ups.
 */
export function drawScatter(canvas, x, y, colour) {
  const { ctx, w, h } = fitCanvas(canvas);
  const n = x.length;
  const pad = 14;
  const [x0, x1] = extent(x);
  const [y0, y1] = extent(y);
  const span = Math.max(x1 - x0, y1 - y0, 1e-300);
  const scale = Math.min((w - 2 * pad) / (x1 - x0 || span), (h - 2 * pad) / (y1 - y0 || span));
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const sx = new Float32Array(n);
  const sy = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    sx[i] = w / 2 + (x[i] - cx) * scale;
    sy[i] = h / 2 - (y[i] - cy) * scale;
  }
  const r = n > 20000 ? 1 : n > 5000 ? 1.6 : 2.6;

  // Group points by colour so each group is one path; for values, low (poorly kept) points are
  // drawn last, on top.
  const groups = new Map();
  const add = (key, style, i) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { style, idx: [] }));
    g.idx.push(i);
  };
  const BINS = 64;
  for (let i = 0; i < n; i++) {
    if (colour.kind === 'value') {
      const v = colour.values[i];
      if (!Number.isFinite(v)) {
        add(Infinity, null, i);
        continue;
      }
      const t = colour.max > colour.min ? (v - colour.min) / (colour.max - colour.min) : 0.5;
      const b = Math.max(0, Math.min(BINS - 1, Math.floor(t * BINS)));
      const rgb = colour.scale === 'diverging' ? diverging((b + 0.5) / BINS) : viridis((b + 0.5) / BINS);
      // Groups are drawn in decreasing key order: the smallest key comes last, on top.
      const top = colour.top ?? 'low';
      const key = top === 'low' ? b : top === 'high' ? BINS - 1 - b : -Math.abs(b + 0.5 - BINS / 2);
      add(key, `rgb(${rgb.join(',')})`, i);
    } else if (colour.kind === 'label') {
      const c = colour.classes.get(colour.labels[i]);
      add(c, CATEGORICAL[c % CATEGORICAL.length], i);
    } else {
      add(0, '#4e79a7', i);
    }
  }
  const keys = [...groups.keys()].sort((a, b) => b - a);
  ctx.globalAlpha = 0.85;
  for (const k of keys) {
    const g = groups.get(k);
    if (g.style === null) {
      // Points without a value: hollow grey rings.
      ctx.strokeStyle = '#999';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const i of g.idx) {
        ctx.moveTo(sx[i] + r, sy[i]);
        ctx.arc(sx[i], sy[i], r, 0, 2 * Math.PI);
      }
      ctx.stroke();
      continue;
    }
    ctx.fillStyle = g.style;
    ctx.beginPath();
    for (const i of g.idx) {
      if (r <= 1) {
        ctx.rect(sx[i] - 0.5, sy[i] - 0.5, 1.2, 1.2);
      } else {
        ctx.moveTo(sx[i] + r, sy[i]);
        ctx.arc(sx[i], sy[i], r, 0, 2 * Math.PI);
      }
    }
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  return { sx, sy, r };
}

/** Ring around point i (hover). */
export function markPoint(canvas, sx, sy, i) {
  const ctx = canvas.getContext('2d');
  ctx.save();
  ctx.lineWidth = 2;
  ctx.strokeStyle = '#111';
  ctx.beginPath();
  ctx.arc(sx[i], sy[i], 6, 0, 2 * Math.PI);
  ctx.stroke();
  ctx.restore();
}

/** Index of the point nearest (px, py) within `radius` CSS pixels, or -1. */
export function nearest(sx, sy, px, py, radius = 8) {
  let best = -1;
  let bestD = radius * radius;
  for (let i = 0; i < sx.length; i++) {
    const dx = sx[i] - px;
    const dy = sy[i] - py;
    const d = dx * dx + dy * dy;
    if (d <= bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

function niceTicks(lo, hi, count) {
  if (!(hi > lo)) {
    const d = Math.abs(lo) * 0.05 || 0.05;
    lo -= d;
    hi += d;
  }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const ticks = [];
  for (let v = start; v <= end + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { lo: start, hi: end, ticks, step };
}

/** Ticks 1, 2, 5, 10, 20, 50, ... over [lo, hi] (lo >= 1) for a log axis. */
function logTicks(lo, hi) {
  const ticks = [];
  for (let p = 1; p <= hi; p *= 10) for (const t of [p, 2 * p, 5 * p]) if (t >= lo && t <= hi) ticks.push(t);
  return { lo, hi, ticks };
}

/**
 * Line chart (logX: a log10 k axis): xs (k values) and series [{label, colour, dash, values}]
 * (dash: true or a dash pattern). The y range is fitted to
 * the data (with nice ticks).
 */
export function drawCurve(canvas, xs, series, { yLabel = '', xLabel = 'k', logX = false } = {}) {
  const { ctx, w, h } = fitCanvas(canvas);
  const m = { l: 52, r: 14, t: 12, b: 34 };
  const all = series.flatMap((s) => s.values).filter(Number.isFinite);
  if (!all.length || !xs.length) return;
  const yt = niceTicks(Math.min(...all), Math.max(...all), 5);
  const xt = logX ? logTicks(Math.min(...xs), Math.max(...xs)) : niceTicks(Math.min(...xs), Math.max(...xs), 8);
  const tx = logX ? Math.log10 : (v) => v;
  const X = (v) => m.l + ((tx(v) - tx(xt.lo)) / (tx(xt.hi) - tx(xt.lo) || 1)) * (w - m.l - m.r);
  const Y = (v) => h - m.b - ((v - yt.lo) / (yt.hi - yt.lo || 1)) * (h - m.t - m.b);
  ctx.font = '11px system-ui, sans-serif';
  ctx.strokeStyle = '#e4e7ef';
  ctx.fillStyle = '#5b6275';
  ctx.lineWidth = 1;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const decimals = Math.max(0, -Math.floor(Math.log10(yt.step)));
  for (const t of yt.ticks) {
    ctx.beginPath();
    ctx.moveTo(m.l, Y(t));
    ctx.lineTo(w - m.r, Y(t));
    ctx.stroke();
    ctx.fillText(t.toFixed(decimals), m.l - 6, Y(t));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of xt.ticks) {
    ctx.beginPath();
    ctx.moveTo(X(t), m.t);
    ctx.lineTo(X(t), h - m.b);
    ctx.stroke();
    ctx.fillText(String(t), X(t), h - m.b + 5);
  }
  ctx.fillText(xLabel, (m.l + w - m.r) / 2, h - 14);
  if (yLabel) {
    ctx.save();
    ctx.translate(11, (m.t + h - m.b) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = 'middle';
    ctx.fillText(yLabel, 0, 0);
    ctx.restore();
  }
  for (const s of series) {
    ctx.strokeStyle = s.colour;
    ctx.fillStyle = s.colour;
    ctx.lineWidth = 2;
    ctx.setLineDash(Array.isArray(s.dash) ? s.dash : s.dash ? [6, 4] : []);
    ctx.beginPath();
    let started = false;
    xs.forEach((k, i) => {
      const v = s.values[i];
      if (!Number.isFinite(v)) return;
      if (started) ctx.lineTo(X(k), Y(v));
      else ctx.moveTo(X(k), Y(v));
      started = true;
    });
    ctx.stroke();
    ctx.setLineDash([]);
    xs.forEach((k, i) => {
      const v = s.values[i];
      if (!Number.isFinite(v)) return;
      ctx.beginPath();
      ctx.arc(X(k), Y(v), 2.8, 0, 2 * Math.PI);
      ctx.fill();
    });
  }
}
