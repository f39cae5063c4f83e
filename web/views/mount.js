// A view in a card: its canvas, a projection picker (and the reliability map's worst-q
// picker), PNG and JSON export, and the text the canvas cannot hold (lens lists, selection
// measures). Used by the page's Views tab (page.js) and by `faithful report` (report.js).

import { CheckVizView } from './checkviz.js';
import { CoRankingView } from './coranking.js';
import { CompareView } from './compare.js';
import { exportJson, exportPng } from './canvas.js';
import { LensView } from './lens.js';
import { ReliabilityView } from './reliability.js';
import { lensReady } from './model.js';
import { ShepardView } from './shepard.js';

export const VIEW_KINDS = ['checkviz', 'reliability', 'lens', 'shepard', 'coranking', 'compare'];

export const VIEW_TITLES = {
  checkviz: 'CheckViz',
  reliability: 'Reliability map',
  lens: 'Neighbour lens',
  shepard: 'Shepard diagram',
  coranking: 'Co-ranking matrix and R_NX',
  compare: 'Two projections, linked',
};

const NOTES = {
  checkviz: 'Each point’s Voronoi cell, coloured by its local trustworthiness (false neighbours brought in: orange) and local continuity (neighbours torn away: purple) on one two-dimensional scale. Cells of points without values are hollow.',
  reliability: 'The original space’s k-nearest-neighbour edges drawn on the projection, coloured by how far the projection put their ends (the neighbour’s rank in the projection). Long dark edges are neighbourhoods the projection tore apart.',
  lens: 'Hover a point (click to pin it): its original neighbours that the projection kept (green) or lost (purple, with their rank r in the projection), and the projection’s false neighbours (orange, with their rank ρ in the original space). Drag a rectangle to measure a region.',
  shepard: 'Every pair’s original distance against its projection distance, counted exactly in bins over all pairs; a faithful projection keeps the mass near an increasing curve.',
  coranking: 'How often a pair of rank ρ in the original space gets rank r in the projection, in log bins; mass on the diagonal is kept order. Beside it, R_NX(K): the neighbourhoods of every size K kept beyond chance.',
  compare: 'Two projections side by side: hover, click or brush in either and the same points light up in both.',
};

/** Which views a model can show (and why not). */
export function available(model, kind) {
  const pr = model.projections;
  switch (kind) {
    case 'checkviz':
      return pr.some((p) => p.localT) ? null : 'no local trustworthiness and continuity (tnc with per-point values)';
    case 'reliability':
      return model.knnHigh && pr.some((p) => p.rankLowOfHigh) ? null : 'no kNN lists and cross ranks';
    case 'lens':
      return pr.some((_, p) => lensReady(model, p)) ? null : 'no kNN lists and cross ranks';
    case 'shepard':
      return pr.some((p) => p.shepard) ? null : 'no Shepard tallies';
    case 'coranking':
      return pr.some((p) => p.coranking) ? null : 'no co-ranking tallies';
    case 'compare':
      return pr.length >= 2 ? (pr.some((p) => p.localT) ? null : 'no local values') : 'needs two projections';
    default:
      return `unknown view '${kind}'`;
  }
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * Mounts view `kind` of `model` into `container`: returns {card, view, summary(), redraw()}.
 * options: projection (index), q (reliability's worst-q %), width (CSS px; default the
 * container's), onChange (called after every redraw or interaction).
 */
export function mountView(container, model, kind, { projection = 0, q, width, onChange } = {}) {
  const card = el('section', 'fv-card');
  card.dataset.view = kind;
  const head = el('div', 'fv-head');
  head.append(el('h3', '', VIEW_TITLES[kind]));
  const tools = el('div', 'fv-tools');
  head.append(tools);
  card.append(head);
  const canvas = el('canvas', 'fv-canvas');
  const body = el('div', 'fv-body');
  body.append(canvas);
  card.append(body);
  const info = el('div', 'fv-info');
  card.append(info);
  card.append(el('p', 'fv-note', NOTES[kind]));
  container.append(card);

  const withData = model.projections.map((p, i) => ({ p, i })).filter(({ p }) => {
    if (kind === 'checkviz' || kind === 'compare') return p.localT;
    if (kind === 'reliability' || kind === 'lens') return p.rankLowOfHigh;
    return p[kind];
  });
  let current = withData.some((x) => x.i === projection) ? projection : withData[0]?.i ?? 0;
  const pick = (label, options, value, onPick) => {
    const sel = el('select');
    sel.setAttribute('aria-label', label);
    for (const [v, t] of options) {
      const o = el('option', '', t);
      o.value = String(v);
      sel.append(o);
    }
    sel.value = String(value);
    sel.addEventListener('change', () => onPick(sel.value));
    tools.append(sel);
    return sel;
  };
  let view = null;
  const make = () => {
    const p = current;
    switch (kind) {
      case 'checkviz':
        return new CheckVizView(canvas, model, p);
      case 'reliability':
        return new ReliabilityView(canvas, model, p, { q: q ?? (model.n * model.k > 300000 ? 5 : 100) });
      case 'lens':
        return new LensView(canvas, info, model, p);
      case 'shepard':
        return new ShepardView(canvas, model, p);
      case 'coranking':
        return new CoRankingView(canvas, model, p);
      case 'compare': {
        const others = withData.map((x) => x.i).filter((i) => i !== p);
        return new CompareView(canvas, info, model, p, others[0] ?? p);
      }
      default:
        throw new Error(`unknown view '${kind}'`);
    }
  };
  const w = () => Math.max(760, Math.min(1180, Math.floor(width ?? (container.clientWidth || 1000) - 2)));
  const redraw = () => {
    const keep = view && (kind === 'lens' || kind === 'compare') ? { point: view.point, selection: view.selection } : null;
    const fresh = !view;
    if (fresh) view = make();
    if (keep && !fresh) Object.assign(view, keep);
    view.draw(w());
    onChange?.();
  };
  if (withData.length > 1 || kind === 'compare') {
    pick('projection', withData.map(({ p, i }) => [i, p.name]), current, (v) => {
      current = Number(v);
      view = null;
      redraw();
    });
  }
  if (kind === 'reliability') {
    const q0 = q ?? (model.n * model.k > 300000 ? 5 : 100);
    pick('edges shown', [[100, 'all edges'], [25, 'worst 25 %'], [10, 'worst 10 %'], [5, 'worst 5 %'], [1, 'worst 1 %']], q0, (v) => {
      view.q = Number(v);
      redraw();
    });
  }
  const stem = () => `faithful-${kind}-${model.projections[current]?.name ?? 'view'}`.replace(/[^A-Za-z0-9_.-]+/g, '_');
  const png = el('button', 'fv-btn', 'PNG');
  png.type = 'button';
  png.title = 'Download this view as a PNG image';
  png.addEventListener('click', () => exportPng(canvas, `${stem()}.png`));
  const json = el('button', 'fv-btn', 'JSON');
  json.type = 'button';
  json.title = 'Download this view’s data as JSON';
  json.addEventListener('click', () => exportJson(view.data(), `${stem()}.json`));
  tools.append(png, json);
  // Interactions call onChange too (a lens moved, a region brushed).
  canvas.addEventListener('pointerup', () => setTimeout(() => onChange?.(), 0));
  redraw();
  return {
    card,
    canvas,
    get view() {
      return view;
    },
    summary: () => view.summary(),
    redraw,
  };
}
