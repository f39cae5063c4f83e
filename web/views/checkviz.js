// CheckViz (Lespinats & Aupetit 2011): the projection's Voronoi cells, rasterised at the
// canvas's resolution (each pixel takes its nearest point, ties to the lower index, up to a
// radius beyond which the plane is empty), coloured by the pair (local trustworthiness, local
// continuity) on a two-dimensional scale; cells of points without values are hollow.

import { CHECKVIZ_CORNERS, checkvizColour, checkvizLow, rgb } from './colour.js';
import { FONT, INK, MUTED, PointGrid, SMALL, drawTitle, fitPoints, fmt, int, setupCanvas, wrapText } from './canvas.js';

/**
 * The raster Voronoi of screen points in `box` at 1 pixel per CSS pixel: owner[pixel] = the
 * nearest point within maxR pixels (-1 beyond).
 */
export function voronoiRaster(grid, box, maxR) {
  const w = Math.max(1, Math.round(box.w));
  const h = Math.max(1, Math.round(box.h));
  const owner = new Int32Array(w * h).fill(-1);
  for (let py = 0; py < h; py++) {
    for (let px = 0; px < w; px++) owner[py * w + px] = grid.nearest(box.x + px + 0.5, box.y + py + 0.5, maxR);
  }
  return { owner, w, h };
}

/** Draws the 2-D legend square of the CheckViz scale at (x, y), size s, for the low end lo; returns the y below it. */
export function checkvizLegend(ctx, x, y, s, lo) {
  const img = ctx.createImageData(32, 32);
  for (let r = 0; r < 32; r++) {
    for (let c = 0; c < 32; c++) {
      const t = lo + ((1 - lo) * c) / 31;
      const cc = lo + ((1 - lo) * (31 - r)) / 31;
      const col = checkvizColour(t, cc, lo);
      img.data.set([col[0], col[1], col[2], 255], (r * 32 + c) * 4);
    }
  }
  const tmp = document.createElement('canvas');
  tmp.width = 32;
  tmp.height = 32;
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(tmp, x, y, s, s);
  ctx.strokeStyle = '#aab0bf';
  ctx.strokeRect(x + 0.5, y + 0.5, s - 1, s - 1);
  ctx.font = SMALL;
  ctx.fillStyle = MUTED;
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  ctx.fillText(fmt(lo), x, y + s + 3);
  ctx.textAlign = 'right';
  ctx.fillText('1', x + s, y + s + 3);
  ctx.textBaseline = 'middle';
  ctx.fillText('1', x - 4, y + 4);
  ctx.fillText(fmt(lo), x - 4, y + s - 4);
  ctx.fillStyle = INK;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  ctx.fillText('local trustworthiness →', x + s / 2, y + s + 17);
  ctx.save();
  ctx.translate(x - 40, y + s / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText('local continuity →', 0, 0);
  ctx.restore();
  ctx.restore();
  return y + s + 34;
}

export class CheckVizView {
  constructor(canvas, model, p) {
    this.canvas = canvas;
    this.model = model;
    this.p = p;
  }

  draw(width, height = 520) {
    const { model, p } = this;
    const pr = model.projections[p];
    const ctx = setupCanvas(this.canvas, width, height);
    const legendW = 230;
    const box = { x: 12, y: 36, w: width - legendW - 24, h: height - 48 };
    drawTitle(ctx, `CheckViz — ${pr.name}`, `${int(model.n)} points · Voronoi cells coloured by local T & C at k = ${pr.tncK ?? '—'}`);
    const fit = fitPoints(pr.x, pr.y, box);
    const grid = new PointGrid(fit.sx, fit.sy, box);
    const n = model.n;
    const ts = pr.localT ?? new Float64Array(n).fill(NaN);
    const cs = pr.localC ?? new Float64Array(n).fill(NaN);
    const lo = checkvizLow(ts, cs);
    const colours = new Array(n);
    let hollow = 0;
    for (let i = 0; i < n; i++) {
      colours[i] = checkvizColour(ts[i], cs[i], lo);
      if (!colours[i]) hollow++;
    }
    // Cells reach at most a few typical spacings beyond their point: the plane far from the
    // data stays empty instead of being claimed by the outermost points.
    const maxR = Math.max(6, 3 * Math.sqrt((box.w * box.h) / n));
    const { owner, w, h } = voronoiRaster(grid, box, maxR);
    const img = ctx.createImageData(w, h);
    const d = img.data;
    const outline = (w * h) / n > 60; // cells large enough to show their edges
    for (let q = 0; q < w * h; q++) {
      const o = owner[q];
      let c = o < 0 ? null : colours[o];
      const right = q % w < w - 1 ? owner[q + 1] : o;
      const below = q + w < w * h ? owner[q + w] : o;
      const edge = right !== o || below !== o;
      if (o >= 0 && !c) {
        // A point without values: a hollow cell, its outline only.
        c = edge ? [150, 156, 170] : [255, 255, 255];
      } else if (c && edge && outline) {
        c = [c[0] * 0.82, c[1] * 0.82, c[2] * 0.82];
      } else if (!c) {
        c = [255, 255, 255];
      }
      d[4 * q] = c[0];
      d[4 * q + 1] = c[1];
      d[4 * q + 2] = c[2];
      d[4 * q + 3] = 255;
    }
    const tmp = document.createElement('canvas');
    tmp.width = w;
    tmp.height = h;
    tmp.getContext('2d').putImageData(img, 0, 0);
    ctx.save();
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(tmp, box.x, box.y, w, h);
    ctx.restore();

    // Legend.
    const lx = width - legendW + 40;
    let y = checkvizLegend(ctx, lx, 52, 130, lo);
    ctx.font = SMALL;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    const swatch = (c, label) => {
      ctx.fillStyle = rgb(c);
      ctx.fillRect(lx - 30, y, 12, 12);
      ctx.strokeStyle = '#aab0bf';
      ctx.strokeRect(lx - 29.5, y + 0.5, 11, 11);
      ctx.fillStyle = INK;
      y = wrapText(ctx, label, lx - 12, y, legendW - 30, 14) + 6;
    };
    swatch(CHECKVIZ_CORNERS.kept, 'neighbourhood kept');
    swatch(CHECKVIZ_CORNERS.falseNeighbours, 'low trustworthiness: false neighbours brought in');
    swatch(CHECKVIZ_CORNERS.missingNeighbours, 'low continuity: neighbours torn away');
    swatch(CHECKVIZ_CORNERS.both, 'both');
    if (hollow) swatch([255, 255, 255], `hollow: ${int(hollow)} points without values`);
    ctx.font = FONT;
    ctx.fillStyle = MUTED;
    y += 4;
    y = wrapText(ctx, `T = ${fmt(pr.trustworthiness)}, C = ${fmt(pr.continuity)}`, lx - 30, y, legendW - 20, 16);

    this.state = { fit, grid, owner, w, h, box, colours, lo, hollow, ctx };
    return this;
  }

  /** Points whose own cell holds their position, for checks: the first few and the worst. */
  samples(extra = []) {
    const { fit, owner, w, h, box, colours, lo } = this.state;
    const pr = this.model.projections[this.p];
    const dpr = window.devicePixelRatio || 1;
    const out = [];
    const want = [...extra, ...Array.from({ length: Math.min(this.model.n, 400) }, (_, i) => i)];
    for (const i of want) {
      if (out.length >= 12) break;
      if (out.some((s) => s.point === i)) continue;
      const px = Math.floor(fit.sx[i] - box.x);
      const py = Math.floor(fit.sy[i] - box.y);
      // The point's own cell, away from its outline (outline pixels are drawn darker).
      if (px < 1 || py < 1 || px >= w - 1 || py >= h - 1) continue;
      if ([0, 1, -1, w, -w].some((d) => owner[py * w + px + d] !== i)) continue;
      const pixel = Array.from(this.state.ctx.getImageData(Math.floor((box.x + px + 0.5) * dpr), Math.floor((box.y + py + 0.5) * dpr), 1, 1).data.slice(0, 3));
      out.push({ point: i, local_trustworthiness: pr.localT?.[i] ?? null, local_continuity: pr.localC?.[i] ?? null, rgb: colours[i], pixel });
    }
    return { low: lo, samples: out };
  }

  summary(extra = []) {
    const pr = this.model.projections[this.p];
    const s = this.samples(extra);
    return { view: 'checkviz', projection: pr.name, points: this.model.n, k: pr.tncK, trustworthiness: pr.trustworthiness, continuity: pr.continuity, cells_without_value: this.state.hollow, scale_low: s.low, samples: s.samples };
  }

  data() {
    const pr = this.model.projections[this.p];
    return { ...this.summary(), local_trustworthiness: pr.localT, local_continuity: pr.localC, colours: this.state.colours };
  }
}
