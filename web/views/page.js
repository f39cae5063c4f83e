// The page's Views tab: computes the views' data with the npm package's worker client
// (`views`: scores with per-point values, kNN lists, cross ranks, Shepard and co-ranking
// tallies, all exact) for the bundled example or the files loaded on the Evaluate tab, and
// draws CheckViz, the reliability map, the neighbour lens, the Shepard and co-ranking
// heatmaps and two projections linked.
//
// Automation: ?view=checkviz|reliability|lens|shepard|coranking|compare&autorun=1
// [&backend=webgpu|cpu][&k=K][&point=I][&projection=P] renders that view on the bundled example,
// then sets <body data-status> to "done" (or "error") and puts the view's summary as JSON in
// #view-json: shepard → pairs; lens → point, k, missing, false (and the selection of every
// point's measures); checkviz → points (and sampled colours); compare → linked point, selection.

import { FaithfulWorker } from '../pkg/worker.js';
import { buildModel, defaultPoint } from './model.js';
import { VIEW_KINDS, available, mountView } from './mount.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const wanted = params.get('view');
/** Above this many points the all-pairs views (Shepard, co-ranking) are left out unless asked for. */
const ALL_PAIRS_MAX_N = 20000;

let client = null;
let mounted = [];

function setStatus(s) {
  if (wanted) document.body.dataset.status = s;
}

function show(on) {
  $('views-panel').hidden = !on;
  $('tab-views').classList.toggle('active', on);
  $('tab-views').setAttribute('aria-selected', String(on));
  if (on) {
    for (const id of ['evaluate-panel', 'bench-panel', 'live-panel']) if ($(id)) $(id).hidden = true;
    for (const id of ['tab-evaluate', 'tab-bench', 'tab-live']) {
      $(id)?.classList.remove('active');
      $(id)?.setAttribute('aria-selected', 'false');
    }
  }
}

function status(text) {
  $('views-status').textContent = text;
}

function fail(message) {
  const box = $('views-error');
  box.textContent = message;
  box.hidden = false;
}

/** The first two columns of an n × d matrix. */
function columns(m) {
  const x = new Float64Array(m.rows);
  const y = new Float64Array(m.rows);
  for (let i = 0; i < m.rows; i++) {
    x[i] = m.data[i * m.cols];
    y[i] = m.data[i * m.cols + 1];
  }
  return { x, y };
}

async function source() {
  if ($('views-source').value === 'page') {
    const d = window.faithfulPageData?.();
    if (!d?.high || !d.lows?.length) throw new Error('Load the original data and at least one projection on the Evaluate tab first (or choose the bundled example).');
    return { high: d.high, lows: d.lows, labels: d.labels?.data ?? null };
  }
  const ex = await client.exampleData();
  return { high: ex.high, lows: ex.lows, labels: ex.labels };
}

async function compute() {
  $('views-error').hidden = true;
  setStatus('running');
  const t0 = performance.now();
  const tick = setInterval(() => status(`computing… ${((performance.now() - t0) / 1000).toFixed(1)} s`), 200);
  try {
    const data = await source();
    const n = data.high.rows;
    const k = Math.max(1, Math.min(n - 1, Math.round(Number($('views-k').value)) || 10));
    const allPairs = n <= ALL_PAIRS_MAX_N || $('views-allpairs').checked;
    const strip = (m) => ({ name: m.name, rows: m.rows, cols: m.cols, data: m.data });
    const lows = data.lows.filter((l) => l.cols >= 2);
    if (!lows.length) throw new Error('The views need a projection with at least two columns.');
    const specs = [`tnc:k=${Math.min(k, Math.ceil(n / 2) - 1)}`];
    const v = await client.views({
      high: strip(data.high),
      lows: lows.map(strip),
      labels: data.labels,
      specs,
      // The Shepard caption's measures, scored where defined: a projection on which one is
      // undefined (srho of a constant projection) goes without it and says why, as `faithful report` does.
      optional: allPairs ? ['stress', 'srho'] : [],
      k,
      shepardBins: allPairs ? 64 : 0,
      corankingPerOctave: allPairs ? 4 : 0,
      backend: $('views-backend').value,
      numerics: 'exact',
    });
    const captionLeftOut = v.projections.flatMap((p) => (p.leftOut ?? []).map((l) => `${l.id} (the Shepard caption): undefined on ${p.name} because ${l.reason}`));
    const model = buildModel({
      title: 'views',
      evaluation: v.evaluation,
      coords: lows.map(columns),
      lists: {
        k: v.k,
        knnHigh: v.knnHigh,
        projections: v.projections.map((p) => ({
          knnLow: p.neighbourhoods?.knnLow,
          rankLowOfHigh: p.neighbourhoods?.rankLowOfHigh,
          rankHighOfLow: p.neighbourhoods?.rankHighOfLow,
          shepard: p.shepard,
          coranking: p.coranking,
        })),
      },
      labels: data.labels,
      leftOut: [...(allPairs ? [] : [`the Shepard and co-ranking views (all pairs) above n = ${ALL_PAIRS_MAX_N}: tick the box to compute them`]), ...captionLeftOut],
    });
    const run = v.evaluation.run;
    status(`${run.n} points · ${run.backend === 'gpu' ? 'WebGPU' : 'CPU (WebAssembly)'} · ${run.numerics} · ${((performance.now() - t0) / 1000).toFixed(2)} s${model.leftOut.length ? ` · left out: ${model.leftOut.join('; ')}` : ''}`);
    draw(model);
  } catch (e) {
    fail(`The views could not be computed: ${e.message}`);
    status('');
    setStatus('error');
  } finally {
    clearInterval(tick);
  }
}

function draw(model) {
  const list = $('views-list');
  list.innerHTML = '';
  mounted = [];
  const kinds = wanted ? [wanted] : VIEW_KINDS;
  const projection = Math.max(0, Number(params.get('projection') ?? 0) || 0);
  for (const kind of kinds) {
    const why = available(model, kind);
    if (why) {
      if (wanted) throw new Error(`view '${kind}': ${why}`);
      continue;
    }
    // onChange can fire while the view mounts (before `m` is assigned): publish skips it then.
    let m;
    m = mountView(list, model, kind, { projection, onChange: () => publish(m) });
    mounted.push(m);
    if (kind === 'lens' || kind === 'compare') {
      const point = params.has('point') ? Number(params.get('point')) : defaultPoint(model, m.view.p ?? m.view.ps[0]);
      if (kind === 'lens') m.view.setPoint(point, true);
      else m.view.link(point);
      if (wanted) {
        // The automation measures every point as one selection (its T & C equal the scores').
        (kind === 'lens' ? m.view.setSelection : m.view.select).call(m.view, Array.from({ length: model.n }, (_, i) => i));
      }
    }
    publish(m);
  }
  setStatus('done');
}

function publish(m) {
  if (!m) return;
  $('view-json').textContent = JSON.stringify(m.summary());
}

function wire() {
  $('tab-views').addEventListener('click', () => show(true));
  for (const id of ['tab-evaluate', 'tab-bench', 'tab-live']) $(id)?.addEventListener('click', () => show(false));
  $('views-run').addEventListener('click', compute);
  const backend = params.get('backend');
  if (backend === 'cpu' || backend === 'webgpu') $('views-backend').value = backend;
  if (params.get('k')) $('views-k').value = params.get('k');
  let frame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => mounted.forEach((m) => m.redraw()));
  });
}

async function main() {
  wire();
  if (wanted && !VIEW_KINDS.includes(wanted)) {
    show(true);
    fail(`unknown view '${wanted}' in the address (one of ${VIEW_KINDS.join(', ')})`);
    setStatus('error');
    return;
  }
  client = new FaithfulWorker();
  if (wanted) {
    setStatus('loading');
    show(true);
    if (params.get('autorun') === '1') await compute();
    else setStatus('ready');
  }
}

main();
