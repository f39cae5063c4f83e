// The entry of `faithful report`'s self-contained HTML (the CLI inlines this file and the
// modules it imports, without their import and export lines): decodes the embedded data
// (gzip, base64, in <script id="faithful-data">; DecompressionStream, no network), builds the
// views' model and draws the scores table, the R_NX curves and every view. When drawn,
// <body data-status> is "done" (or "error") and #view-json holds every view's summary.
//
// The data: base64 of gzip of [u32 header length, little-endian][header JSON][padding to 8]
// [arrays], each array at its header offset (from the start of the array section, aligned).

import { CATEGORICAL, drawCurve } from '../plots.js';
import { fmt } from './canvas.js';
import { buildModel, defaultPoint } from './model.js';
import { VIEW_KINDS, VIEW_TITLES, available, mountView } from './mount.js';

const TYPES = { f64: Float64Array, f32: Float32Array, u32: Uint32Array, i32: Int32Array };

/** The embedded data: {header, array(name)}. */
export async function decodeReportData(text) {
  const raw = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const buf = await new Response(stream).arrayBuffer();
  const hlen = new DataView(buf).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, hlen)));
  const start = Math.ceil((4 + hlen) / 8) * 8;
  const array = (name) => {
    if (name === null || name === undefined) return null;
    const a = header.arrays[name];
    if (!a) throw new Error(`the report's data has no array '${name}'`);
    return new TYPES[a.dtype](buf, start + a.offset, a.length);
  };
  return { header, array, bytes: buf.byteLength };
}

/** The views' model from the decoded data. */
export function reportModel({ header, array }) {
  const evaluation = header.evaluation;
  // Per-point values travel as arrays: put them back where the CLI's JSON has them.
  for (const ref of header.locals) {
    evaluation.projections[ref.projection].scores[ref.score].local[ref.key] = array(ref.array);
  }
  return buildModel({
    title: header.title,
    evaluation,
    coords: header.projections.map((p) => ({ x: array(p.x), y: array(p.y) })),
    lists: {
      k: header.k,
      knnHigh: array(header.knn_high),
      projections: header.projections.map((p) => ({
        knnLow: array(p.knn_low),
        rankLowOfHigh: array(p.rank_low_of_high),
        rankHighOfLow: array(p.rank_high_of_low),
        shepard: p.shepard && { bins: p.shepard.bins, maxHigh: p.shepard.max_high, maxLow: p.shepard.max_low, pairs: p.shepard.pairs, counts: array(p.shepard.counts) },
        coranking: p.coranking && { edges: array(p.coranking.edges), counts: array(p.coranking.counts), rnx: array(p.coranking.rnx), aucRnx: p.coranking.auc_rnx },
      })),
    },
    labels: array(header.labels),
    leftOut: header.left_out,
    meta: header,
  });
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/**
 * The scores table: a row per output key, a column per projection. A score is matched across
 * projections by its id and parameters (an optional caption measure, srho of a constant
 * projection, may be absent from some: its cell is "—").
 */
function scoresTable(evaluation) {
  const projs = evaluation.projections;
  const params = (score) => Object.entries(score.params).map(([k, v]) => `${k}=${v}`).join(', ');
  const rows = new Map();
  for (const p of projs) {
    for (const score of p.scores) {
      const id = `${score.id}(${params(score)})`;
      if (!rows.has(id)) rows.set(id, { score, keys: new Set() });
      for (const key of Object.keys(score.values)) rows.get(id).keys.add(key);
    }
  }
  const cell = (p, id, key) => p.scores.find((s) => `${s.id}(${params(s)})` === id)?.values[key];
  let html = '<table class="fr-scores"><thead><tr><th>measure</th>' + projs.map((p) => `<th class="num">${esc(p.name)}</th>`).join('') + '</tr></thead><tbody>';
  for (const [id, { score, keys }] of rows) {
    const ps = params(score);
    html += `<tr class="group"><td colspan="${projs.length + 1}">${esc(score.id)}${ps ? ` <span class="muted">(${esc(ps)})</span>` : ''}</td></tr>`;
    for (const key of keys) {
      html += `<tr><td class="key">${esc(key)}</td>` + projs.map((p) => `<td class="num" title="${esc(String(cell(p, id, key)))}">${fmt(cell(p, id, key))}</td>`).join('') + '</tr>';
    }
  }
  return `${html}</tbody></table>`;
}

/** R_NX(K) of every projection on one log-K chart. */
function curves(container, model) {
  const withCurve = model.projections.filter((p) => p.coranking);
  if (!withCurve.length) return;
  const card = document.createElement('section');
  card.className = 'fv-card';
  card.innerHTML = '<div class="fv-head"><h3>R_NX(K) of every projection</h3></div><div class="fr-curve"><canvas></canvas></div><div class="fr-legend"></div>';
  container.append(card);
  const n = model.n;
  const ks = [];
  for (let K = 1; K <= n - 2; K = K < 20 ? K + 1 : Math.ceil(K * 1.05)) ks.push(K);
  if (ks[ks.length - 1] !== n - 2) ks.push(n - 2);
  const series = withCurve.map((p, i) => ({ label: `${p.name} (AUC ${fmt(p.coranking.aucRnx)})`, colour: CATEGORICAL[i % CATEGORICAL.length], dash: false, values: ks.map((K) => p.coranking.rnx[K - 1]) }));
  drawCurve(card.querySelector('canvas'), ks, series, { yLabel: 'R_NX(K)', xLabel: 'K (log scale)', logX: true });
  card.querySelector('.fr-legend').innerHTML = series.map((s) => `<span><i style="border-color:${s.colour}"></i>${esc(s.label)}</span>`).join('');
}

export async function startReport() {
  document.body.dataset.status = 'loading';
  try {
    const decoded = await decodeReportData(document.getElementById('faithful-data').textContent);
    const model = reportModel(decoded);
    document.getElementById('fr-scores').innerHTML = scoresTable(model.evaluation);
    const views = document.getElementById('fr-views');
    curves(views, model);
    const summaries = [];
    const mounted = [];
    for (const kind of VIEW_KINDS) {
      const why = available(model, kind);
      if (why) {
        const p = document.createElement('p');
        p.className = 'fr-missing';
        p.textContent = `${VIEW_TITLES[kind]}: not in this report (${why}).`;
        views.append(p);
        continue;
      }
      const m = mountView(views, model, kind, {});
      if (kind === 'lens') m.view.setPoint(defaultPoint(model, m.view.p), true);
      if (kind === 'compare') m.view.link(defaultPoint(model, m.view.ps[0]));
      mounted.push(m);
      summaries.push(m.summary());
    }
    let frame = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => mounted.forEach((m) => m.redraw()));
    });
    document.getElementById('view-json').textContent = JSON.stringify({ n: model.n, k: model.k, projections: model.projections.map((p) => p.name), left_out: model.leftOut, data_bytes: decoded.bytes, views: summaries });
    document.body.dataset.status = 'done';
  } catch (e) {
    const box = document.getElementById('fr-error');
    box.textContent = `This report could not be drawn: ${e.message}`;
    box.hidden = false;
    document.body.dataset.status = 'error';
  }
}
