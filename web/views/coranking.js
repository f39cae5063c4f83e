// The co-ranking matrix (Lee & Verleysen) in log bins of K, counted exactly by the library
// over every ordered pair, as a heatmap on log-log axes (original rank ρ up, projection rank r
// across; the diagonal is a kept rank, the k × k corner the neighbourhoods T & C look at),
// beside R_NX(K) from the same pass on a log-K axis.

import { heatColour } from './colour.js';
import { GRID, INK, SMALL, colourBar, drawAxes, drawTitle, fmt, int, logTicks, niceRange, setupCanvas, sig, tickLabel } from './canvas.js';

export class CoRankingView {
  constructor(canvas, model, p) {
    this.canvas = canvas;
    this.model = model;
    this.p = p;
  }

  draw(width, height = 500) {
    const { model, p } = this;
    const pr = model.projections[p];
    const c = pr.coranking;
    const { n, k } = model;
    const ctx = setupCanvas(this.canvas, width, height);
    const bins = c.edges.length - 1;
    drawTitle(ctx, `Co-ranking matrix — ${pr.name}`, `${bins} × ${bins} log bins of K over all n(n−1) ordered pairs · AUC of R_NX ${fmt(c.aucRnx)}`);
    const side = Math.min(Math.floor((width - 200) / 2) - 40, height - 110);
    const box = { x: 76, y: 44, w: side, h: side };
    const L = Math.log(n);
    const X = (r) => box.x + (Math.log(r) / L) * box.w;
    const Y = (r) => box.y + box.h - (Math.log(r) / L) * box.h;
    // Density: pairs per unit of rank area, so wide bins do not look crowded.
    const dens = new Float64Array(bins * bins);
    let lo = Infinity;
    let hi = 0;
    let total = 0;
    for (let a = 0; a < bins; a++) {
      for (let b = 0; b < bins; b++) {
        const v = c.counts[a * bins + b];
        total += v;
        if (!v) continue;
        const d = v / ((c.edges[a + 1] - c.edges[a]) * (c.edges[b + 1] - c.edges[b]));
        dens[a * bins + b] = d;
        if (d < lo) lo = d;
        if (d > hi) hi = d;
      }
    }
    ctx.save();
    for (let a = 0; a < bins; a++) {
      for (let b = 0; b < bins; b++) {
        const col = heatColour(dens[a * bins + b], lo, hi);
        if (!col) continue;
        ctx.fillStyle = `rgb(${col[0]},${col[1]},${col[2]})`;
        const x0 = X(c.edges[b]);
        const x1 = X(c.edges[b + 1]);
        const y0 = Y(c.edges[a + 1]);
        const y1 = Y(c.edges[a]);
        ctx.fillRect(x0, y0, Math.max(1, x1 - x0 + 0.5), Math.max(1, y1 - y0 + 0.5));
      }
    }
    // The K = k corner (T & C's neighbourhoods).
    ctx.strokeStyle = '#e66101';
    ctx.setLineDash([5, 3]);
    ctx.lineWidth = 1.5;
    ctx.strokeRect(X(1), Y(k + 1), X(k + 1) - X(1), Y(1) - Y(k + 1));
    ctx.restore();
    const ticks = logTicks(1, n - 1).map((t) => ({ t, at: X(t) }));
    drawAxes(ctx, box, ticks.map((t) => ({ at: t.at, label: int(t.t) })), ticks.map((t) => ({ at: Y(t.t), label: int(t.t) })), 'rank in the projection, r (log)', 'rank in the original space, ρ (log)');
    const cbx = box.x + box.w + 30;
    colourBar(ctx, cbx, box.y + 60, 14, Math.min(160, box.h - 80), (t) => heatColour(lo * Math.exp(t * Math.log(hi / lo)), lo, hi), [{ t: 0, label: sig(lo) }, { t: 1, label: sig(hi) }], 'pairs per unit of rank area (log)');
    ctx.save();
    ctx.font = SMALL;
    ctx.fillStyle = '#e66101';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(`- - K = k = ${k}`, cbx, box.y + Math.min(160, box.h - 80) + 80);
    ctx.restore();

    // R_NX(K) beside it.
    const cbox = { x: cbx + 150, y: 44, w: width - (cbx + 150) - 16, h: side };
    const rnx = c.rnx;
    let rlo = Infinity;
    let rhi = -Infinity;
    for (const v of rnx) {
      if (v < rlo) rlo = v;
      if (v > rhi) rhi = v;
    }
    const yt = niceRange(Math.min(0, rlo), Math.max(rhi, 0.1), 5);
    const ylo = yt.lo;
    const yhi = yt.hi;
    const CX = (K) => cbox.x + (Math.log(K) / Math.log(n - 2 || 2)) * cbox.w;
    const CY = (v) => cbox.y + cbox.h - ((v - ylo) / (yhi - ylo)) * cbox.h;
    ctx.save();
    ctx.strokeStyle = GRID;
    for (const t of yt.ticks) {
      ctx.beginPath();
      ctx.moveTo(cbox.x, CY(t));
      ctx.lineTo(cbox.x + cbox.w, CY(t));
      ctx.stroke();
    }
    ctx.beginPath();
    ctx.rect(cbox.x, cbox.y, cbox.w, cbox.h);
    ctx.clip();
    ctx.strokeStyle = '#4e79a7';
    ctx.lineWidth = 2;
    ctx.beginPath();
    rnx.forEach((v, t) => (t ? ctx.lineTo(CX(t + 1), CY(v)) : ctx.moveTo(CX(1), CY(v))));
    ctx.stroke();
    ctx.strokeStyle = '#e66101';
    ctx.setLineDash([5, 3]);
    ctx.beginPath();
    ctx.moveTo(CX(k), cbox.y);
    ctx.lineTo(CX(k), cbox.y + cbox.h);
    ctx.stroke();
    ctx.restore();
    const kt = logTicks(1, n - 2);
    drawAxes(ctx, cbox, kt.map((t) => ({ at: CX(t), label: int(t) })), yt.ticks.map((t) => ({ at: CY(t), label: tickLabel(t, yt.step) })), 'neighbourhood size K (log)', 'R_NX(K)');
    ctx.save();
    ctx.font = SMALL;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    const atK = rnx[k - 1];
    ctx.fillStyle = INK;
    ctx.fillText(`R_NX(${k}) = ${fmt(atK)} · AUC (log K) = ${fmt(c.aucRnx)}`, cbox.x, cbox.y + cbox.h + 50);
    ctx.restore();
    this.state = { total, lo, hi, rnxAtK: atK };
    return this;
  }

  summary() {
    const pr = this.model.projections[this.p];
    const c = pr.coranking;
    return { view: 'coranking', projection: pr.name, bins: c.edges.length - 1, total: this.state.total, auc_rnx: c.aucRnx, k: this.model.k, rnx_at_k: this.state.rnxAtK };
  }

  data() {
    const c = this.model.projections[this.p].coranking;
    return { ...this.summary(), edges: c.edges, counts: c.counts, rnx: c.rnx };
  }
}
