// The Shepard diagram as a density heatmap: every pair's original distance d^X against its
// projection distance d^Y, counted exactly in bins by the library in one pass over all
// n(n−1)/2 pairs (never n² points on screen), coloured on a log scale; the caption gives
// stress and Spearman's ρ over the same pairs.

import { heatColour } from './colour.js';
import { FONT, INK, MUTED, colourBar, drawAxes, drawTitle, fmt, int, niceTicks, setupCanvas, tickLabel, wrapText } from './canvas.js';

/** A bins × bins heatmap of counts (counts[a * bins + b], a along x) into box, y upwards, on a log scale from 1 to max; empty bins white. */
export function heatmap(ctx, counts, bins, box) {
  let max = 0;
  for (const c of counts) if (c > max) max = c;
  const img = ctx.createImageData(bins, bins);
  for (let a = 0; a < bins; a++) {
    for (let b = 0; b < bins; b++) {
      const col = heatColour(counts[a * bins + b], 1, max) ?? [255, 255, 255];
      img.data.set([col[0], col[1], col[2], 255], ((bins - 1 - b) * bins + a) * 4);
    }
  }
  const tmp = document.createElement('canvas');
  tmp.width = bins;
  tmp.height = bins;
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(tmp, box.x, box.y, box.w, box.h);
  ctx.restore();
  return max;
}

export class ShepardView {
  constructor(canvas, model, p) {
    this.canvas = canvas;
    this.model = model;
    this.p = p;
  }

  draw(width, height = 500) {
    const pr = this.model.projections[this.p];
    const s = pr.shepard;
    const ctx = setupCanvas(this.canvas, width, height);
    drawTitle(ctx, `Shepard diagram — ${pr.name}`, `all ${int(s.pairs)} pairs, ${s.bins} × ${s.bins} bins`);
    const side = Math.min(width - 330, height - 120);
    const box = { x: 76, y: 40, w: side, h: side };
    const max = heatmap(ctx, s.counts, s.bins, box);
    const xt = niceTicks(0, s.maxHigh, 5);
    const yt = niceTicks(0, s.maxLow, 5);
    drawAxes(
      ctx,
      box,
      xt.ticks.filter((v) => v <= s.maxHigh).map((v) => ({ at: box.x + (v / s.maxHigh) * box.w, label: tickLabel(v, xt.step) })),
      yt.ticks.filter((v) => v <= s.maxLow).map((v) => ({ at: box.y + box.h - (v / s.maxLow) * box.h, label: tickLabel(v, yt.step) })),
      'distance in the original space',
      'distance in the projection',
    );
    const lx = box.x + box.w + 40;
    const lt = [1, max];
    const labels = [{ t: 0, label: '1' }];
    for (let p = 10; p < max; p *= 10) if (Math.log(p) / Math.log(max) < 0.9) labels.push({ t: Math.log(p) / Math.log(max), label: int(p) });
    labels.push({ t: 1, label: int(lt[1]) });
    colourBar(ctx, lx, box.y + 48, 16, Math.min(200, box.h - 60), (t) => heatColour(Math.exp(t * Math.log(max)), 1, max) ?? [255, 255, 255], labels, 'pairs per bin (log scale; white: none)');
    ctx.font = FONT;
    ctx.fillStyle = INK;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    let y = box.y + box.h + 50;
    const caption = `stress ${fmt(pr.stress)} · Spearman ρ ${fmt(pr.srho)} · ${int(s.pairs)} = n(n−1)/2 pairs counted exactly`;
    y = wrapText(ctx, caption, box.x - 60, y, width - 40, 16);
    ctx.fillStyle = MUTED;
    wrapText(ctx, `axes from 0 to the largest pair distance: ${fmt(s.maxHigh)} (original), ${fmt(s.maxLow)} (projection)`, box.x - 60, y, width - 40, 16);
    let nonEmpty = 0;
    for (const c of s.counts) if (c > 0) nonEmpty++;
    this.state = { max, nonEmpty };
    return this;
  }

  summary() {
    const pr = this.model.projections[this.p];
    const s = pr.shepard;
    let total = 0;
    for (const c of s.counts) total += c;
    return { view: 'shepard', projection: pr.name, bins: s.bins, pairs: total, reported_pairs: s.pairs, max_high: s.maxHigh, max_low: s.maxLow, stress: pr.stress, srho: pr.srho, largest_bin: this.state.max, nonempty_bins: this.state.nonEmpty };
  }

  data() {
    const s = this.model.projections[this.p].shepard;
    return { ...this.summary(), counts: s.counts };
  }
}
