// Drawing helpers shared by the views: a canvas sized for the device pixel ratio, axes and
// ticks, colour bars, legends, a uniform grid of screen points (hover, brush, raster Voronoi),
// and PNG / JSON downloads. Everything a view shows (legend and caption included) is drawn on
// its canvas, so its PNG is the whole view.

export const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const SMALL = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const BOLD = '600 12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const INK = '#1d2433';
export const MUTED = '#5b6275';
export const GRID = '#e4e7ef';

/** Sizes `canvas` to cssW × cssH CSS pixels at the device pixel ratio; returns its 2-D context (CSS-pixel units), cleared to white. */
export function setupCanvas(canvas, cssW, cssH) {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, cssW, cssH);
  ctx.font = FONT;
  return ctx;
}

/**
 * Screen positions of points (x, y) fitted into box {x, y, w, h} with equal scales on both
 * axes (a projection's distances are drawn true), y upwards. Returns {sx, sy} (Float32Array)
 * and the mapping.
 */
export function fitPoints(x, y, box, pad = 8) {
  const n = x.length;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let i = 0; i < n; i++) {
    if (x[i] < x0) x0 = x[i];
    if (x[i] > x1) x1 = x[i];
    if (y[i] < y0) y0 = y[i];
    if (y[i] > y1) y1 = y[i];
  }
  if (!(x1 > x0)) { x0 -= 1; x1 += 1; }
  if (!(y1 > y0)) { y0 -= 1; y1 += 1; }
  const scale = Math.min((box.w - 2 * pad) / (x1 - x0), (box.h - 2 * pad) / (y1 - y0));
  const cx = box.x + box.w / 2, cy = box.y + box.h / 2;
  const mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
  const sx = new Float32Array(n), sy = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    sx[i] = cx + (x[i] - mx) * scale;
    sy[i] = cy - (y[i] - my) * scale;
  }
  return { sx, sy, scale, box };
}

/**
 * A uniform grid over screen points for nearest-point look-ups (hover, the raster Voronoi)
 * and rectangle queries (brush): O(1) expected per query at any n.
 */
export class PointGrid {
  constructor(sx, sy, box, perCell = 2) {
    const n = sx.length;
    this.sx = sx;
    this.sy = sy;
    this.box = box;
    const cells = Math.max(1, Math.floor(n / perCell));
    this.cell = Math.max(1, Math.sqrt((box.w * box.h) / cells));
    this.cols = Math.max(1, Math.ceil(box.w / this.cell) + 1);
    this.rows = Math.max(1, Math.ceil(box.h / this.cell) + 1);
    const count = new Int32Array(this.cols * this.rows + 1);
    const at = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      at[i] = this.cellOf(sx[i], sy[i]);
      count[at[i] + 1]++;
    }
    for (let c = 0; c < this.cols * this.rows; c++) count[c + 1] += count[c];
    this.start = count;
    this.items = new Int32Array(n);
    const fill = count.slice(0, -1);
    for (let i = 0; i < n; i++) this.items[fill[at[i]]++] = i;
  }
  cellOf(px, py) {
    const c = Math.min(this.cols - 1, Math.max(0, Math.floor((px - this.box.x) / this.cell)));
    const r = Math.min(this.rows - 1, Math.max(0, Math.floor((py - this.box.y) / this.cell)));
    return r * this.cols + c;
  }
  /** The point nearest (px, py) within maxR CSS pixels (ties: the lower index), or -1. */
  nearest(px, py, maxR = Infinity) {
    const c0 = Math.floor((px - this.box.x) / this.cell);
    const r0 = Math.floor((py - this.box.y) / this.cell);
    let best = -1;
    let bestD = maxR * maxR;
    const rings = Math.max(this.cols, this.rows) + Math.max(0, -c0, c0 - this.cols, -r0, r0 - this.rows);
    for (let ring = 0; ring <= rings; ring++) {
      // Every point of a ring is at least (ring - 1) cells away.
      const floor = (ring - 1) * this.cell;
      if (ring > 0 && floor > 0 && floor * floor > bestD) break;
      for (let r = r0 - ring; r <= r0 + ring; r++) {
        if (r < 0 || r >= this.rows) continue;
        const edge = r === r0 - ring || r === r0 + ring;
        for (let c = c0 - ring; c <= c0 + ring; c += edge ? 1 : 2 * ring || 1) {
          if (c < 0 || c >= this.cols) continue;
          const cell = r * this.cols + c;
          for (let t = this.start[cell]; t < this.start[cell + 1]; t++) {
            const i = this.items[t];
            const dx = this.sx[i] - px, dy = this.sy[i] - py;
            const d = dx * dx + dy * dy;
            if (d < bestD || (d === bestD && i < best)) {
              bestD = d;
              best = i;
            }
          }
        }
      }
    }
    return best;
  }
  /** Indices of the points inside the rectangle (any corner order), ascending. */
  inRect(ax, ay, bx, by) {
    const [x0, x1] = ax < bx ? [ax, bx] : [bx, ax];
    const [y0, y1] = ay < by ? [ay, by] : [by, ay];
    const out = [];
    const c0 = this.cellOf(x0, y0) % this.cols, r0 = Math.floor(this.cellOf(x0, y0) / this.cols);
    const c1 = this.cellOf(x1, y1) % this.cols, r1 = Math.floor(this.cellOf(x1, y1) / this.cols);
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const cell = r * this.cols + c;
        for (let t = this.start[cell]; t < this.start[cell + 1]; t++) {
          const i = this.items[t];
          if (this.sx[i] >= x0 && this.sx[i] <= x1 && this.sy[i] >= y0 && this.sy[i] <= y1) out.push(i);
        }
      }
    }
    return out.sort((a, b) => a - b);
  }
}

/** Nice ticks over [lo, hi]: about `count` round values. */
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) {
    const d = Math.abs(lo) * 0.05 || 0.05;
    lo -= d;
    hi += d;
  }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return { ticks, step };
}

/** Ticks 1, 2, 5, 10, 20, 50, ... within [lo, hi] (lo >= 1), for log axes. */
export function logTicks(lo, hi) {
  const ticks = [];
  for (let p = 1; p <= hi; p *= 10) for (const t of [p, 2 * p, 5 * p]) if (t >= lo && t <= hi) ticks.push(t);
  return ticks;
}

/** A tick's label: thousands separated by thin spaces, decimals as the step needs. */
export function tickLabel(v, step = 1) {
  const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  const s = v.toFixed(decimals);
  return Math.abs(v) >= 10000 ? Number(s).toLocaleString('en-US').replace(/,/g, '\u2009') : s;
}

/** Nice ticks that cover [lo, hi]: the range widened to whole steps, {lo, hi, ticks, step}. */
export function niceRange(lo, hi, count = 5) {
  const { step } = niceTicks(lo, hi, count);
  const a = Math.floor(lo / step + 1e-9) * step;
  const b = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = a; v <= b + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return { lo: ticks[0], hi: ticks[ticks.length - 1], ticks, step };
}

/** Three significant digits (an exponent below 0.001 or from 10^5). */
export function sig(v) {
  if (!Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(3)));
}

/** A number for captions: 4 significant decimals, exponent beyond. */
export function fmt(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(3);
  return v.toFixed(4);
}

/** An integer with thin-space thousands separators. */
export function int(v) {
  return Math.round(v).toLocaleString('en-US').replace(/,/g, '\u2009');
}

/**
 * Axes on box {x, y, w, h}: x ticks [{at (px), label}], y ticks likewise, axis titles, a light
 * frame. The caller maps values to pixels.
 */
export function drawAxes(ctx, box, xTicks, yTicks, xTitle, yTitle) {
  ctx.save();
  ctx.strokeStyle = '#aab0bf';
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
  ctx.fillStyle = MUTED;
  ctx.font = SMALL;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  let lastRight = -Infinity;
  for (const t of xTicks) {
    ctx.beginPath();
    ctx.moveTo(t.at, box.y + box.h);
    ctx.lineTo(t.at, box.y + box.h + 4);
    ctx.stroke();
    const w = ctx.measureText(t.label).width;
    // Labels that would touch the previous one are left out (the tick stays).
    if (t.at - w / 2 > lastRight + 4) {
      ctx.fillText(t.label, t.at, box.y + box.h + 6);
      lastRight = t.at + w / 2;
    }
  }
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  let lastTop = Infinity;
  for (const t of yTicks) {
    ctx.beginPath();
    ctx.moveTo(box.x - 4, t.at);
    ctx.lineTo(box.x, t.at);
    ctx.stroke();
    if (t.at + 6 < lastTop - 2) {
      ctx.fillText(t.label, box.x - 6, t.at);
      lastTop = t.at - 6;
    }
  }
  ctx.fillStyle = INK;
  ctx.font = FONT;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.fillText(xTitle, box.x + box.w / 2, box.y + box.h + 36);
  ctx.save();
  ctx.translate(box.x - 44, box.y + box.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(yTitle, 0, 0);
  ctx.restore();
  ctx.restore();
}

/** A vertical colour bar at (x, y), w × h: colourAt(t) for t from 0 (bottom) to 1 (top), labels [{t, label}], a title above. */
export function colourBar(ctx, x, y, w, h, colourAt, labels, title) {
  const img = ctx.createImageData(1, 64);
  for (let r = 0; r < 64; r++) {
    const c = colourAt(1 - r / 63);
    img.data.set([c[0], c[1], c[2], 255], r * 4);
  }
  const tmp = document.createElement('canvas');
  tmp.width = 1;
  tmp.height = 64;
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tmp, x, y, w, h);
  ctx.strokeStyle = '#aab0bf';
  ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
  ctx.fillStyle = MUTED;
  ctx.font = SMALL;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const l of labels) ctx.fillText(l.label, x + w + 6, y + (1 - l.t) * h);
  ctx.fillStyle = INK;
  ctx.font = BOLD;
  ctx.textBaseline = 'bottom';
  wrapText(ctx, title, x, y - 8, 170, 15, true);
  ctx.restore();
}

/**
 * Writes `text` from (x, y) wrapped at `width`; returns the y after the last line. With `up`,
 * the last line ends at y (the text grows upwards).
 */
export function wrapText(ctx, text, x, y, width, lineHeight, up = false) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width > width && line) {
      lines.push(line);
      line = word;
    } else {
      line = next;
    }
  }
  if (line) lines.push(line);
  const y0 = up ? y - (lines.length - 1) * lineHeight : y;
  lines.forEach((l, i) => ctx.fillText(l, x, y0 + i * lineHeight));
  return y0 + lines.length * lineHeight;
}

/** A legend entry: a swatch (filled circle, ring, or line) and its label at (x, y); returns the next y. */
export function legendEntry(ctx, x, y, kind, colour, label, width = 170) {
  ctx.save();
  ctx.fillStyle = colour;
  ctx.strokeStyle = colour;
  ctx.lineWidth = 2;
  ctx.beginPath();
  if (kind === 'line') {
    ctx.moveTo(x, y);
    ctx.lineTo(x + 14, y);
    ctx.stroke();
  } else if (kind === 'ring') {
    ctx.arc(x + 7, y, 5, 0, 2 * Math.PI);
    ctx.stroke();
  } else {
    ctx.arc(x + 7, y, 4.5, 0, 2 * Math.PI);
    ctx.fill();
  }
  ctx.fillStyle = INK;
  ctx.font = SMALL;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const end = wrapText(ctx, label, x + 20, y, width - 20, 14);
  ctx.restore();
  return end + 6;
}

/** Downloads a Blob as a file. */
export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/** The canvas as a PNG download. */
export function exportPng(canvas, name) {
  canvas.toBlob((blob) => blob && download(blob, name), 'image/png');
}

/** JSON download (typed arrays as plain arrays). */
export function exportJson(value, name) {
  const text = JSON.stringify(value, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v), 1);
  download(new Blob([text], { type: 'application/json' }), name);
}

/** A view's title (bold) and a muted note after it, on one line at (x, y). */
export function drawTitle(ctx, title, note = '', x = 12, y = 10) {
  ctx.save();
  ctx.font = BOLD;
  ctx.fillStyle = INK;
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  ctx.fillText(title, x, y);
  const w = ctx.measureText(title).width;
  if (note) {
    ctx.font = SMALL;
    ctx.fillStyle = MUTED;
    ctx.fillText(note, x + w + 12, y + 1);
  }
  ctx.restore();
}

/** Draws points as small dots of one colour (n up to 10^5 and more: one path per call). */
export function dots(ctx, sx, sy, idx, colour, r = 1.6) {
  ctx.save();
  ctx.fillStyle = colour;
  ctx.beginPath();
  const each = (i) => {
    if (r <= 1.1) ctx.rect(sx[i] - 0.6, sy[i] - 0.6, 1.2, 1.2);
    else {
      ctx.moveTo(sx[i] + r, sy[i]);
      ctx.arc(sx[i], sy[i], r, 0, 2 * Math.PI);
    }
  };
  if (idx === null) for (let i = 0; i < sx.length; i++) each(i);
  else for (const i of idx) each(i);
  ctx.fill();
  ctx.restore();
}

/** A dot radius that suits n points in a box of `area` square pixels. */
export function dotRadius(n, area) {
  return Math.max(0.8, Math.min(3, 0.35 * Math.sqrt(area / Math.max(1, n))));
}
