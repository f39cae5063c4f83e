// Two projections side by side, points coloured by CheckViz's scale, with linked hover (the
// point and its original neighbours light up in both, missing ones in purple) and linked
// brushing (a region brushed in either selects the same points in both, with each
// projection's measures of the selection).

import { checkvizColour, checkvizLow, LENS, rgb } from './colour.js';
import { MUTED, PointGrid, SMALL, dotRadius, drawTitle, fitPoints, setupCanvas, wrapText } from './canvas.js';
import { attachPointer, drawLens, drawSelection, selectionHtml } from './lens.js';
import { lensOf, lensReady, selectionStats } from './model.js';

export class CompareView {
  constructor(canvas, info, model, pa = 0, pb = 1) {
    this.canvas = canvas;
    this.info = info;
    this.model = model;
    this.ps = [pa, pb];
    this.point = null;
    this.selection = null;
    this.attached = false;
  }

  draw(width, height = 480) {
    const { model } = this;
    this.width = width;
    this.height = height;
    const w = (width - 36) / 2;
    this.panels = this.ps.map((p, s) => {
      const pr = model.projections[p];
      const box = { x: 12 + s * (w + 12), y: 40, w, h: height - 70 };
      const fit = fitPoints(pr.x, pr.y, box);
      return { p, box, fit, grid: new PointGrid(fit.sx, fit.sy, box) };
    });
    this.r = dotRadius(model.n, this.panels[0].box.w * this.panels[0].box.h);
    this.base = document.createElement('canvas');
    const ctx = setupCanvas(this.base, width, height);
    const names = this.ps.map((p) => model.projections[p].name);
    drawTitle(ctx, `Compare — ${names.join(' vs ')}`, 'linked: hover or click a point, drag to brush; colours: CheckViz (local T & C)');
    for (const panel of this.panels) {
      const pr = model.projections[panel.p];
      ctx.save();
      ctx.strokeStyle = '#d5d9e3';
      ctx.strokeRect(panel.box.x + 0.5, panel.box.y + 0.5, panel.box.w - 1, panel.box.h - 1);
      ctx.font = SMALL;
      ctx.fillStyle = MUTED;
      ctx.textBaseline = 'top';
      ctx.fillText(`${pr.name} · T ${pr.trustworthiness?.toFixed(4) ?? '—'} · C ${pr.continuity?.toFixed(4) ?? '—'}`, panel.box.x + 6, panel.box.y + 5);
      ctx.restore();
      const lo = pr.localT && pr.localC ? checkvizLow(pr.localT, pr.localC) : 0;
      // One path per colour: quantised to 1/32 of each axis.
      const groups = new Map();
      for (let i = 0; i < model.n; i++) {
        const c = pr.localT && pr.localC ? checkvizColour(pr.localT[i], pr.localC[i], lo) : null;
        const key = c ? rgb(c.map((v) => Math.round(v / 8) * 8)) : '#c9ced9';
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(i);
      }
      ctx.save();
      for (const [colour, idx] of groups) {
        ctx.fillStyle = colour;
        ctx.strokeStyle = 'rgba(60,66,80,0.35)';
        ctx.lineWidth = 0.5;
        ctx.beginPath();
        for (const i of idx) {
          ctx.moveTo(panel.fit.sx[i] + this.r, panel.fit.sy[i]);
          ctx.arc(panel.fit.sx[i], panel.fit.sy[i], this.r, 0, 2 * Math.PI);
        }
        ctx.fill();
        if (this.r > 1.5) ctx.stroke();
      }
      ctx.restore();
    }
    ctx.save();
    ctx.font = SMALL;
    ctx.fillStyle = MUTED;
    ctx.textBaseline = 'top';
    wrapText(ctx, 'Rings: the point (black), its original neighbours kept (green) or missing (purple), false neighbours (orange); blue: the brushed selection.', 12, height - 24, width - 24, 14);
    ctx.restore();
    if (!this.attached) this.attach();
    this.render();
    return this;
  }

  panelAt(x) {
    return this.panels.find((p) => x >= p.box.x && x <= p.box.x + p.box.w) ?? null;
  }

  attach() {
    this.attached = true;
    attachPointer(this.canvas, {
      onHover: (x, y) => {
        const panel = this.panelAt(x);
        const i = panel ? panel.grid.nearest(x, y, 12) : -1;
        if (i >= 0 && i !== this.point) this.link(i);
      },
      onClick: (x, y) => {
        const panel = this.panelAt(x);
        const i = panel ? panel.grid.nearest(x, y, 12) : -1;
        if (i >= 0) this.link(i);
      },
      onBrush: (r) => {
        const panel = this.panelAt(r.x0);
        if (panel) this.select(panel.grid.inRect(r.x0, r.y0, r.x1, r.y1));
      },
    });
  }

  /** Links point i across both panels. */
  link(i) {
    this.point = i;
    this.render();
  }

  /** Selects the same points in both panels. */
  select(idx) {
    this.selection = idx && idx.length ? idx : null;
    this.render();
  }

  render() {
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
    this.lenses = [];
    const lens = this.hasLens();
    for (const panel of this.panels) {
      if (this.selection) drawSelection(ctx, panel.fit, this.selection, this.r);
      if (this.point === null) continue;
      if (lens) this.lenses.push(drawLens(ctx, this.model, panel.p, panel.fit, this.point, panel.box, { labels: false }));
      else drawPoint(ctx, panel.fit, this.point);
    }
    if (this.info) {
      let html = '';
      if (this.point !== null && lens) {
        html += '<div class="fv-lists">' + this.lenses.map((l, s) => `<div><b>${this.model.projections[this.ps[s]].name}</b>, point #${l.point}: <span style="color:${LENS.missing}">${l.missing.length} missing</span>, <span style="color:${LENS.false}">${l.false.length} false</span> of ${this.model.k}</div>`).join('') + '</div>';
      } else if (this.point !== null) {
        html += `<div class="fv-lists">point #${this.point} (its neighbours are not shown: no kNN lists and cross ranks here)</div>`;
      }
      if (this.selection) html += this.ps.map((p) => selectionHtml(selectionStats(this.model, p, this.selection))).join('');
      this.info.innerHTML = html;
    }
  }

  /** Whether both projections have what a lens reads (a large report may leave it out). */
  hasLens() {
    return this.ps.every((p) => lensReady(this.model, p));
  }

  summary() {
    const names = this.ps.map((p) => this.model.projections[p].name);
    const out = { view: 'compare', projections: names, points: this.model.n, k: this.model.k };
    if (this.point !== null && this.hasLens()) {
      out.linked = { point: this.point, missing: this.ps.map((p) => lensOf(this.model, p, this.point).missing), false: this.ps.map((p) => lensOf(this.model, p, this.point).false) };
    } else if (this.point !== null) {
      out.linked = { point: this.point, lens: 'no kNN lists and cross ranks' };
    }
    if (this.selection) out.selection = this.ps.map((p) => selectionStats(this.model, p, this.selection));
    return out;
  }

  data() {
    return this.summary();
  }
}

/** The linked point alone (a black ring), where no lens can be drawn. */
function drawPoint(ctx, fit, i) {
  ctx.save();
  ctx.beginPath();
  ctx.arc(fit.sx[i], fit.sy[i], 6, 0, 2 * Math.PI);
  ctx.strokeStyle = '#111';
  ctx.lineWidth = 2;
  ctx.stroke();
  ctx.restore();
}
