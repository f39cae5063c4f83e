// The neighbour lens (after KnnSleepwalk): hover or click a point to see its k original
// neighbours (missing ones, torn away by the projection, marked with their projection rank)
// and its k projection neighbours (false ones, brought in from afar, marked with their original
// rank); drag a rectangle to brush a region and read the selection's measures.

import { LENS } from './colour.js';
import { INK, MUTED, PointGrid, SMALL, dotRadius, dots, drawTitle, fitPoints, fmt, int, legendEntry, setupCanvas, wrapText } from './canvas.js';
import { lensOf, selectionStats } from './model.js';

export const SELECTED = '#2f6fde';

/** Places labels beside points without overlap (greedy, four positions each); returns the placed ones. */
export function placeLabels(ctx, items, box) {
  const placed = [];
  const hits = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  for (const it of items) {
    const w = ctx.measureText(it.text).width + 4;
    const h = 13;
    for (const [dx, dy] of [[6, -h - 2], [6, 2], [-w - 6, -h - 2], [-w - 6, 2]]) {
      const r = { x: it.x + dx, y: it.y + dy, w, h };
      if (r.x < box.x || r.y < box.y || r.x + w > box.x + box.w || r.y + h > box.y + box.h) continue;
      if (placed.some((q) => hits(q, r)) || (it.avoid ?? []).some((q) => hits(q, r))) continue;
      placed.push({ ...r, text: it.text, colour: it.colour });
      break;
    }
  }
  return placed;
}

/** Draws one projection's lens of point i (rings, links, rank labels) on ctx; returns its lens. */
export function drawLens(ctx, model, p, fit, i, box, { labels = true } = {}) {
  const lens = lensOf(model, p, i);
  const { sx, sy } = fit;
  ctx.save();
  ctx.lineWidth = 1.2;
  // Links from the point to its missing (dashed) and false neighbours.
  for (const [list, colour, dash] of [[lens.missing, LENS.missing, [4, 3]], [lens.false, LENS.false, []]]) {
    ctx.strokeStyle = colour;
    ctx.setLineDash(dash);
    ctx.globalAlpha = 0.8;
    ctx.beginPath();
    for (const j of list) {
      ctx.moveTo(sx[i], sy[i]);
      ctx.lineTo(sx[j], sy[j]);
    }
    ctx.stroke();
  }
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
  const ring = (j, colour, r = 4.5, fill = false) => {
    ctx.beginPath();
    ctx.arc(sx[j], sy[j], r, 0, 2 * Math.PI);
    if (fill) {
      ctx.fillStyle = colour;
      ctx.fill();
    }
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.stroke();
  };
  const missing = new Set(lens.missing);
  for (const j of lens.high) if (!missing.has(j)) ring(j, LENS.kept, 3.5, true);
  for (const j of lens.missing) ring(j, LENS.missing, 4.5, true);
  for (const j of lens.false) ring(j, LENS.false, 4.5, true);
  ring(i, LENS.point, 7);
  let hidden = 0;
  if (labels) {
    ctx.font = SMALL;
    const items = [
      ...lens.missing.map((j, s) => ({ x: sx[j], y: sy[j], text: `r ${lens.missing_ranks[s]}`, colour: LENS.missing })),
      ...lens.false.map((j, s) => ({ x: sx[j], y: sy[j], text: `ρ ${lens.false_ranks[s]}`, colour: LENS.false })),
    ];
    const point = { x: sx[i] - 9, y: sy[i] - 9, w: 18, h: 18 };
    const placed = placeLabels(ctx, items.map((it) => ({ ...it, avoid: [point] })), box);
    hidden = items.length - placed.length;
    ctx.textBaseline = 'top';
    ctx.textAlign = 'left';
    for (const l of placed) {
      ctx.fillStyle = 'rgba(255,255,255,0.85)';
      ctx.fillRect(l.x, l.y, l.w, l.h);
      ctx.fillStyle = l.colour;
      ctx.fillText(l.text, l.x + 2, l.y + 1);
    }
  }
  ctx.restore();
  return { ...lens, labels_hidden: hidden };
}

/** The selection's marks: a blue ring per point. */
export function drawSelection(ctx, fit, idx, r) {
  ctx.save();
  ctx.strokeStyle = SELECTED;
  ctx.lineWidth = 1.2;
  ctx.beginPath();
  for (const i of idx) {
    ctx.moveTo(fit.sx[i] + r + 1.5, fit.sy[i]);
    ctx.arc(fit.sx[i], fit.sy[i], r + 1.5, 0, 2 * Math.PI);
  }
  ctx.stroke();
  ctx.restore();
}

/**
 * Mouse handling shared by the lens and the compare view: hover → onHover(px, py), click →
 * onClick(px, py), drag → onBrush(rect) (and onBrushing while dragging).
 */
export function attachPointer(canvas, { onHover, onClick, onBrush, onBrushing, onLeave }) {
  let down = null;
  let frame = 0;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  canvas.addEventListener('pointerdown', (e) => {
    down = at(e);
    canvas.setPointerCapture?.(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    const [x, y] = at(e);
    if (down && Math.hypot(x - down[0], y - down[1]) > 4) {
      onBrushing?.({ x0: down[0], y0: down[1], x1: x, y1: y });
      return;
    }
    if (down || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      onHover?.(x, y);
    });
  });
  canvas.addEventListener('pointerup', (e) => {
    if (!down) return;
    const [x, y] = at(e);
    const start = down;
    down = null;
    if (Math.hypot(x - start[0], y - start[1]) > 4) onBrush?.({ x0: start[0], y0: start[1], x1: x, y1: y });
    else onClick?.(x, y);
  });
  canvas.addEventListener('pointerleave', () => {
    if (!down) onLeave?.();
  });
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** The selection's measures as an HTML table. */
export function selectionHtml(stats) {
  if (!stats || !stats.count) return '';
  const rows = [];
  if (stats.trustworthiness !== undefined) {
    rows.push(`<tr><td>trustworthiness of the selection's rows (k = ${stats.k})</td><td class="num">${fmt(stats.trustworthiness)}</td></tr>`);
    rows.push(`<tr><td>continuity of the selection's rows</td><td class="num">${fmt(stats.continuity)}</td></tr>`);
  }
  for (const [key, v] of Object.entries(stats.mean_local)) rows.push(`<tr><td>mean ${esc(key)}</td><td class="num">${fmt(v)}</td></tr>`);
  return `<div class="fv-sel"><b>${esc(stats.projection)}: ${int(stats.count)} points selected</b><table>${rows.join('')}</table></div>`;
}

export class LensView {
  constructor(canvas, info, model, p) {
    this.canvas = canvas;
    this.info = info;
    this.model = model;
    this.p = p;
    this.point = null;
    this.pinned = false;
    this.selection = null;
    this.attached = false;
  }

  draw(width, height = 520) {
    const { model, p } = this;
    const pr = model.projections[p];
    const legendW = 230;
    this.width = width;
    this.height = height;
    this.box = { x: 12, y: 36, w: width - legendW - 24, h: height - 48 };
    this.fit = fitPoints(pr.x, pr.y, this.box);
    this.grid = new PointGrid(this.fit.sx, this.fit.sy, this.box);
    this.r = dotRadius(model.n, this.box.w * this.box.h);
    // The base layer (points and legend) is drawn once; a lens or a selection redraws on it.
    this.base = document.createElement('canvas');
    const ctx = setupCanvas(this.base, width, height);
    drawTitle(ctx, `Neighbour lens — ${pr.name}`, `k = ${model.k} · hover or click a point · drag to brush a region`);
    dots(ctx, this.fit.sx, this.fit.sy, null, LENS.other, this.r);
    const lx = width - legendW + 20;
    let y = 52;
    y = legendEntry(ctx, lx, y, 'ring', LENS.point, 'the point');
    y = legendEntry(ctx, lx, y, 'dot', LENS.kept, 'original neighbour kept among its k projection neighbours');
    y = legendEntry(ctx, lx, y, 'dot', LENS.missing, 'missing neighbour (r: its rank in the projection)');
    y = legendEntry(ctx, lx, y, 'dot', LENS.false, 'false neighbour (ρ: its rank in the original space)');
    y = legendEntry(ctx, lx, y, 'ring', SELECTED, 'brushed selection');
    this.legendY = y;
    if (!this.attached) this.attach();
    this.render();
    return this;
  }

  attach() {
    this.attached = true;
    attachPointer(this.canvas, {
      onHover: (x, y) => {
        if (this.pinned) return;
        const i = this.grid.nearest(x, y, 12);
        if (i !== this.point && i >= 0) this.setPoint(i, false);
      },
      onClick: (x, y) => {
        const i = this.grid.nearest(x, y, 12);
        if (i < 0 || (this.pinned && i === this.point)) this.pinned = false;
        else this.setPoint(i, true);
        this.render();
      },
      onBrushing: (r) => this.render(r),
      onBrush: (r) => this.setSelection(this.grid.inRect(r.x0, r.y0, r.x1, r.y1)),
    });
  }

  setPoint(i, pinned = true) {
    this.point = i;
    this.pinned = pinned;
    this.render();
  }

  setSelection(idx) {
    this.selection = idx && idx.length ? idx : null;
    this.render();
  }

  render(brushing = null) {
    const ctx = this.canvas.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== this.base.width || this.canvas.height !== this.base.height) {
      this.canvas.width = this.base.width;
      this.canvas.height = this.base.height;
      this.canvas.style.width = `${this.width}px`;
      this.canvas.style.height = `${this.height}px`;
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.base, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (this.selection) drawSelection(ctx, this.fit, this.selection, this.r);
    this.lens = this.point === null ? null : drawLens(ctx, this.model, this.p, this.fit, this.point, this.box);
    if (brushing) {
      ctx.save();
      ctx.strokeStyle = SELECTED;
      ctx.setLineDash([4, 3]);
      ctx.strokeRect(brushing.x0, brushing.y0, brushing.x1 - brushing.x0, brushing.y1 - brushing.y0);
      ctx.restore();
    }
    if (this.lens) {
      const lx = this.width - 210;
      ctx.save();
      ctx.font = SMALL;
      ctx.fillStyle = INK;
      ctx.textBaseline = 'top';
      let y = this.legendY + 8;
      const label = this.model.labels ? ` · label ${this.model.labels[this.point]}` : '';
      y = wrapText(ctx, `point #${this.point}${label}${this.pinned ? ' (pinned)' : ''}`, lx, y, 200, 14) + 4;
      ctx.fillStyle = MUTED;
      y = wrapText(ctx, `${this.lens.missing.length} missing and ${this.lens.false.length} false of its ${this.model.k} neighbours`, lx, y, 200, 14) + 4;
      if (this.lens.labels_hidden) wrapText(ctx, `${this.lens.labels_hidden} rank labels left out where they would overlap (all are listed below)`, lx, y, 200, 14);
      ctx.restore();
    }
    this.renderInfo();
  }

  renderInfo() {
    if (!this.info) return;
    const l = this.lens;
    const list = (ids, ranks, sym) => (ids.length ? ids.map((j, s) => `#${j} <span class="muted">${sym} ${ranks[s]}</span>`).join(', ') : '<span class="muted">none</span>');
    let html = '';
    if (l) {
      html += `<div class="fv-lists"><div><b>Point #${l.point}</b> — original neighbours: ${l.high.map((j) => `#${j}`).join(', ')}</div>`;
      html += `<div><b style="color:${LENS.missing}">missing</b> (rank r in the projection): ${list(l.missing, l.missing_ranks, 'r')}</div>`;
      html += `<div><b style="color:${LENS.false}">false</b> (rank ρ in the original space): ${list(l.false, l.false_ranks, 'ρ')}</div></div>`;
    }
    if (this.selection) html += selectionHtml(selectionStats(this.model, this.p, this.selection));
    this.info.innerHTML = html;
  }

  summary() {
    const pr = this.model.projections[this.p];
    const out = { view: 'lens', projection: pr.name, k: this.model.k };
    if (this.lens) {
      const { point, missing, missing_ranks, false: f, false_ranks } = this.lens;
      Object.assign(out, { point, missing, missing_ranks, false: f, false_ranks });
    }
    if (this.selection) out.selection = selectionStats(this.model, this.p, this.selection);
    return out;
  }

  data() {
    return { ...this.summary(), lens: this.lens };
  }
}
