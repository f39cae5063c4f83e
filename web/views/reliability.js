// The reliability map (after Jeon et al. 2022): the original space's kNN edges drawn on the
// projection, each coloured by its projection rank (how far apart the projection put the
// two ends): kept edges (rank ≤ k) light, torn ones from orange to dark red; optionally only
// the worst q % of the edges. Ranks are the library's cross ranks.

import { KEPT, RANK_STOPS, rankColour, rankT, rgb } from './colour.js';
import { colourBar, dotRadius, dots, drawTitle, fitPoints, int, legendEntry, logTicks, setupCanvas } from './canvas.js';
import { reliabilityEdges } from './model.js';

export class ReliabilityView {
  constructor(canvas, model, p, { q = 100 } = {}) {
    this.canvas = canvas;
    this.model = model;
    this.p = p;
    this.q = q;
  }

  draw(width, height = 520) {
    const { model, p, q } = this;
    const { n, k } = model;
    const pr = model.projections[p];
    const ctx = setupCanvas(this.canvas, width, height);
    const legendW = 230;
    const box = { x: 12, y: 36, w: width - legendW - 24, h: height - 48 };
    const fit = fitPoints(pr.x, pr.y, box);
    const edges = reliabilityEdges(model, p, q);
    drawTitle(ctx, `Reliability map — ${pr.name}`, `${int(edges.shown)} of ${int(edges.total)} original ${k}-NN edges${q < 100 ? ` (the worst ${q} %)` : ''}`);
    dots(ctx, fit.sx, fit.sy, null, '#c9ced9', dotRadius(n, box.w * box.h) * 0.8);
    const ranks = pr.rankLowOfHigh;
    const knn = model.knnHigh;
    // Kept edges first and faint, then torn ones in order of rank: the worst on top. One path
    // per colour step (an edge list of 10^6 stays one pass).
    const steps = 24;
    const paths = Array.from({ length: steps + 1 }, () => []);
    let missing = 0;
    for (const e of edges.order) {
      const t = rankT(ranks[e], k, n);
      if (t >= 0) missing++;
      paths[t < 0 ? 0 : 1 + Math.min(steps - 1, Math.floor(t * steps))].push(e);
    }
    ctx.save();
    ctx.lineCap = 'round';
    paths.forEach((list, s) => {
      if (!list.length) return;
      ctx.strokeStyle = s === 0 ? rgb(KEPT) : rgb(rankColour((s - 0.5) / steps));
      ctx.globalAlpha = s === 0 ? 0.35 : 0.75;
      ctx.lineWidth = s === 0 ? 0.8 : 1.1;
      ctx.beginPath();
      for (const e of list) {
        const i = Math.floor(e / k);
        const j = knn[e];
        ctx.moveTo(fit.sx[i], fit.sy[i]);
        ctx.lineTo(fit.sx[j], fit.sy[j]);
      }
      ctx.stroke();
    });
    ctx.restore();

    const lx = width - legendW + 20;
    const top = Math.max(k + 1, 1);
    const ticks = logTicks(top, n - 1).filter((t) => t > k);
    const tOf = (r) => Math.max(0, rankT(r, k, n));
    colourBar(ctx, lx, 84, 16, 180, (t) => rankColour(t), [{ t: 0, label: `${k + 1}` }, ...ticks.filter((r) => r > 2 * (k + 1) && r < (n - 1) / 1.6).map((r) => ({ t: tOf(r), label: int(r) })), { t: 1, label: int(n - 1) }], 'projection rank of an original neighbour (log)');
    let y = 290;
    y = legendEntry(ctx, lx, y, 'line', rgb(KEPT), `kept: rank ≤ k = ${k}`);
    legendEntry(ctx, lx, y, 'line', rgb(RANK_STOPS[2]), `torn: rank > k (${int(missing)} edges shown)`);
    this.state = { fit, edges, missing };
    return this;
  }

  summary() {
    const { model, p } = this;
    const pr = model.projections[p];
    const { edges, missing } = this.state;
    const worst = Array.from(edges.order.subarray(Math.max(0, edges.order.length - 5))).reverse().map((e) => ({ point: Math.floor(e / model.k), neighbour: model.knnHigh[e], projection_rank: pr.rankLowOfHigh[e] }));
    let torn = 0;
    for (let e = 0; e < pr.rankLowOfHigh.length; e++) if (pr.rankLowOfHigh[e] > model.k) torn++;
    return { view: 'reliability', projection: pr.name, k: model.k, edges: edges.total, shown: edges.shown, q: this.q, torn_edges: torn, torn_shown: missing, worst };
  }

  data() {
    const pr = this.model.projections[this.p];
    return { ...this.summary(), knn_high: this.model.knnHigh, projection_ranks: pr.rankLowOfHigh };
  }
}
