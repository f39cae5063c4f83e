// The page: inputs, measure choice, runs in the package's worker client (pkg/worker.js), results, plots.
//
// Automation hook: ?example=default&autorun=1[&backend=webgpu|cpu] loads the bundled example and
// evaluates exampleData().specs with local values. When a run ends, <body data-status> becomes
// "done" (or "error") and #results-json holds the result JSON exactly as evaluate() returned it.
// Benchmark tab: ?bench=1[&autorun=1][&sizes=300,600][&dims=20][&k=20][&repeat=3][&backends=cpu,webgpu]
// opens it (and runs it); when the run ends, data-status becomes "done" (or "error") and
// #bench-json holds the receipt JSON exactly as bench() returned it (faithful bench's format).
// Cancel (#cancel, #bench-cancel) stops a run by terminating the worker (wasm cannot be
// interrupted from outside) and starting a fresh one; data-status becomes "cancelled".

import { FaithfulWorker, WorkerCrashedError } from './pkg/worker.js';
import { readFile } from './files.js';
import { drawScatter, drawCurve, markPoint, nearest, viridisGradient, divergingGradient, CATEGORICAL } from './plots.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const CURVE_AUTO_MAX_N = 20000;

const state = {
  measures: [],
  example: null,
  source: null, // 'example' | 'files'
  high: null,
  lows: [],
  labels: null,
  busy: false,
  json: null, // the last result, as evaluate() returned it
  result: null,
  run: null, // {lows, labels} the result was computed on
  scatter: null, // screen positions for hover
  browserAdapter: null, // navigator.gpu's adapter info, as the worker saw it
  ready: false, // the worker has loaded the wasm package
  benchJson: null, // the last benchmark receipt, as bench() returned it
  curve: null,
};

// The Views tab (views/page.js) can draw the data loaded here.
window.faithfulPageData = () => ({ high: state.high, lows: state.lows, labels: state.labels });

function setStatus(s) {
  // The Live tab (live.js) and the Views tab (views/page.js) own the status when the address opens them.
  if (params.get('live') === '1' || params.has('view')) return;
  document.body.dataset.status = s;
}

// ---------------------------------------------------------------- worker

// The runs go through the package's own worker client (faithful-dr/worker, copied to pkg/ by
// web/build.sh): a wasm trap restarts its worker and rejects the call with a typed error.
let client = null;
let generation = 0;

function startWorker() {
  client = new FaithfulWorker();
  generation += 1;
}

/** Thrown to the callers of a run that Cancel stopped. */
class Cancelled extends Error {
  constructor() {
    super('Cancelled.');
    this.cancelled = true;
  }
}

/** Stops whatever the worker runs (wasm cannot be interrupted from outside): its calls reject
 * as cancelled, and a fresh worker loads the wasm package again for the next call. */
function cancelRun() {
  if (!state.busy) return;
  const old = client;
  startWorker();
  old.terminate();
}

// What the browser says about its WebGPU adapter (wgpu cannot see names in a browser).
async function adapterInfo() {
  if (!('gpu' in navigator)) return null;
  try {
    const a = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!a) return null;
    const i = a.info ?? {};
    return { vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '', description: i.description ?? '', fallback: !!i.isFallbackAdapter };
  } catch {
    return null;
  }
}

const loadHint = (e) => (e instanceof WorkerCrashedError && /failed/.test(e.message) ? `${e.message} (is web/pkg built? web/build.sh builds it)` : e.message);

/** One run on the worker: {value, ms}; a run that Cancel stopped rejects with Cancelled. */
async function call(op, request, onProgress) {
  const gen = generation;
  const c = client;
  const t0 = performance.now();
  try {
    let value;
    if (op === 'init') {
      const [version, measures, example, adapter] = await Promise.all([c.version(), c.measures(), c.exampleData(), adapterInfo()]);
      value = { version, measures, example, webgpu: adapter !== null, adapter };
    } else if (op === 'evaluate') {
      value = await c.evaluateJson(request);
    } else if (op === 'bench') {
      const a = await adapterInfo();
      const adapterLabel = a ? [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' ') || 'webgpu' : undefined;
      value = await c.bench({ ...request, adapterLabel }, { onProgress });
    } else {
      throw new Error(`unknown operation ${op}`);
    }
    return { value, ms: performance.now() - t0 };
  } catch (e) {
    if (gen !== generation) throw new Cancelled();
    throw new Error(loadHint(e));
  }
}

// ---------------------------------------------------------------- messages

function showError(message) {
  const box = $('error');
  box.innerHTML = '';
  const b = document.createElement('b');
  b.textContent = 'The run failed';
  box.append(b, document.createTextNode(message));
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
}

/** Results on screen that no longer match the loaded data are dimmed, with a note. */
function markStale(stale) {
  for (const id of ['results-card', 'scatter-card', 'curve-card']) $(id).classList.toggle('stale', stale && !!state.result);
  $('stale-note').hidden = !(stale && state.result);
}

function dataMessage(text, kind = 'error') {
  const div = document.createElement('div');
  div.className = `msg ${kind}`;
  div.textContent = text;
  $('data-msg').append(div);
}

function showNotice(html) {
  const n = $('notice');
  n.innerHTML = html;
  n.hidden = false;
}

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

let ticker = null;
function setBusy(busy, label = '') {
  state.busy = busy;
  clearInterval(ticker);
  const el = $('run-status');
  if (busy) {
    const t0 = performance.now();
    const tick = () => {
      el.innerHTML = `<span class="spinner"></span><span>${esc(label)} ${((performance.now() - t0) / 1000).toFixed(1)} s</span>`;
    };
    tick();
    ticker = setInterval(tick, 100);
  }
  updateButtons();
}

function updateButtons() {
  const ready = !!state.high && state.lows.length > 0 && !state.busy;
  $('run').disabled = !ready;
  $('curve-run').disabled = !ready || !$('curve-measure').value;
  $('load-example').disabled = state.busy || !state.example;
  $('download').disabled = !state.json;
  $('bench-run').disabled = state.busy || !state.ready;
  $('bench-download').disabled = !state.benchJson;
  for (const id of ['cancel', 'bench-cancel']) $(id).hidden = !state.busy;
}

// ---------------------------------------------------------------- data

function loadExample() {
  const ex = state.example;
  state.source = 'example';
  state.high = { ...ex.high, dtype: 'float64' };
  state.lows = ex.lows.map((l) => ({ ...l, dtype: 'float64' }));
  state.labels = { name: 'labels', rows: ex.labels.length, data: ex.labels, dtype: 'int32' };
  $('data-msg').innerHTML = '';
  renderData();
  applyDefaultChecks();
  markStale(true);
}

async function addFiles(role, files) {
  if (!files.length) return;
  if (state.source === 'example') {
    state.high = null;
    state.lows = [];
    state.labels = null;
  }
  state.source = 'files';
  $('data-msg').innerHTML = '';
  const hadLabels = !!state.labels;
  for (const file of files) {
    try {
      const m = await readFile(file, role === 'labels' ? 'labels' : 'points');
      if (role === 'high') state.high = m;
      else if (role === 'labels') state.labels = m;
      else {
        const i = state.lows.findIndex((l) => l.name === m.name);
        if (i >= 0) state.lows[i] = m;
        else state.lows.push(m);
      }
    } catch (e) {
      dataMessage(e.message.startsWith(file.name) ? e.message : `${file.name}: ${e.message}`);
      document.querySelector(`.drop[data-role=${role}]`).classList.add('bad');
    }
  }
  renderData();
  if (hadLabels !== !!state.labels) applyDefaultChecks();
  markStale(true);
}

function renderData() {
  const n = state.high?.rows;
  const line = (m, role, index) => {
    const shape = m.cols === undefined ? `${m.rows} labels` : `${m.rows} × ${m.cols}`;
    const mismatch = n !== undefined && role !== 'high' && m.rows !== n;
    const classes = m.cols === undefined ? ` · ${new Set(m.data).size} classes` : '';
    return `<span class="file"><span class="fname" title="${esc(m.name)}">${esc(m.name)}</span>
      <span class="shape">${shape} · ${esc(m.dtype)}${classes}</span>
      ${mismatch ? `<span class="warn" title="rows differ from the original data">≠ ${n} rows</span>` : ''}
      <button type="button" data-remove="${role}" data-index="${index}" title="remove">×</button></span>`;
  };
  $('info-high').innerHTML = state.high ? line(state.high, 'high', 0) : '';
  $('info-lows').innerHTML = state.lows.map((l, i) => line(l, 'lows', i)).join('');
  $('info-labels').innerHTML = state.labels ? line(state.labels, 'labels', 0) : '';
  for (const role of ['high', 'lows', 'labels']) {
    const filled = role === 'lows' ? state.lows.length > 0 : !!state[role];
    const zone = document.querySelector(`.drop[data-role=${role}]`);
    zone.classList.toggle('filled', filled);
    if (filled) zone.classList.remove('bad');
  }
  for (const m of state.measures) {
    const row = document.querySelector(`.measure[data-id="${m.id}"]`);
    if (!row) continue;
    const off = m.labels && !state.labels;
    row.classList.toggle('disabled', off);
    row.querySelector('input[type=checkbox]').disabled = off;
    if (off) row.querySelector('input[type=checkbox]').checked = false;
  }
  renderCurveChoices();
  updateButtons();
}

function removeData(role, index) {
  if (role === 'high') state.high = null;
  else if (role === 'labels') state.labels = null;
  else state.lows.splice(index, 1);
  if (state.source === 'example') state.source = 'files';
  renderData();
  if (role === 'labels') applyDefaultChecks();
  markStale(true);
}

function wireDrops() {
  for (const zone of document.querySelectorAll('.drop')) {
    const role = zone.dataset.role;
    const input = zone.querySelector('input[type=file]');
    input.addEventListener('change', async () => {
      await addFiles(role, [...input.files]);
      input.value = '';
    });
    zone.addEventListener('dragover', (e) => {
      e.preventDefault();
      zone.classList.add('over');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('over'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('over');
      const files = [...(e.dataTransfer?.files ?? [])];
      addFiles(role, role === 'lows' ? files : files.slice(0, 1));
    });
    zone.addEventListener('click', (e) => {
      const btn = e.target.closest('button[data-remove]');
      if (btn) {
        e.preventDefault();
        removeData(btn.dataset.remove, Number(btn.dataset.index));
      }
    });
  }
  // A file dropped outside the zones must not navigate away.
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => e.preventDefault());
}

// ---------------------------------------------------------------- measures

const DEFAULTS = ['tnc', 'mrre', 'lcmc', 'nh'];
// Measures over all pairs (their per-point values, when any, are parts of a total or costs).
const ALL_PAIRS = ['stress', 'sn_stress', 'nm_stress', 'pr', 'srho', 'kl_div', 'dtm', 'sammon', 'cca_stress', 'residual_variance', 'nerv', 'ale', 'triplet_accuracy', 'global_score'];

// Issue 27's groups: are the classes still apart, did the projection tear or glue loops, is the
// scatterplot itself clumpy or stringy.
const CLASS_SEPARATION = ['ivm', 'hypothesis_margin', 'knn_classification', 'gce'];
const TOPOLOGY = ['topology'];
const SCATTERPLOT = ['scagnostics'];

function renderMeasures() {
  const own = (m) => CLASS_SEPARATION.includes(m.id) || TOPOLOGY.includes(m.id) || SCATTERPLOT.includes(m.id);
  const groups = [
    ['Neighbourhood measures (per-point values)', state.measures.filter((m) => !own(m) && m.local.length > 0 && !m.labels && !ALL_PAIRS.includes(m.id)), true],
    ['Distance and embedding-cost measures', state.measures.filter((m) => !own(m) && (ALL_PAIRS.includes(m.id) || (m.local.length === 0 && !m.labels))), false],
    ['Class separation', state.measures.filter((m) => CLASS_SEPARATION.includes(m.id)), false],
    ['Label and cluster measures', state.measures.filter((m) => !own(m) && m.labels), false],
    ['Topology (persistent homology)', state.measures.filter((m) => TOPOLOGY.includes(m.id)), false],
    ['Scatterplot diagnostics', state.measures.filter((m) => SCATTERPLOT.includes(m.id)), false],
  ];
  const list = $('measure-list');
  list.innerHTML = '';
  for (const [title, ms, open] of groups) {
    if (!ms.length) continue;
    const det = document.createElement('details');
    det.className = 'mgroup';
    det.open = open;
    det.innerHTML = `<summary>${esc(title)} <span class="muted">(${ms.length})</span></summary>`;
    for (const m of ms) {
      const row = document.createElement('div');
      row.className = 'measure';
      row.dataset.id = m.id;
      const inputs = m.params.map((p) => {
        const name = `p-${m.id}-${p.name}`;
        if (p.kind === 'choice' && p.open) {
          // A listed choice or another value the measure accepts (snc's '<k>-means').
          const dl = `dl-${m.id}-${p.name}`;
          return `<label>${esc(p.name)} <input list="${dl}" name="${name}" data-param="${esc(p.name)}" data-default="${esc(p.default)}" value="${esc(p.default)}" title="${esc(p.choices.join(', '))} or <k>-means"><datalist id="${dl}">${p.choices
            .map((c) => `<option value="${esc(c)}">`).join('')}<option value="5-means"></datalist></label>`;
        }
        if (p.kind === 'choice') {
          return `<label>${esc(p.name)} <select name="${name}" data-param="${esc(p.name)}" data-default="${esc(p.default)}">${p.choices
            .map((c) => `<option${c === p.default ? ' selected' : ''}>${esc(c)}</option>`).join('')}</select></label>`;
        }
        const step = p.kind === 'int' ? '1' : 'any';
        // A parameter without a default (cca_stress's lambda) starts empty and must be filled in.
        const req = p.required ? ' required placeholder="required"' : '';
        return `<label>${esc(p.name)} <input type="number" step="${step}" name="${name}" data-param="${esc(p.name)}" data-default="${esc(p.default)}" value="${esc(p.default)}"${req}></label>`;
      }).join('');
      row.innerHTML = `<input type="checkbox" id="m-${m.id}" value="${m.id}">
        <label for="m-${m.id}"><span class="mname">${esc(m.id)}</span><span class="mzadu">${esc(m.zadu_id)}</span>${m.labels ? '<span class="tag">labels</span>' : ''}</label>
        <div class="about">${esc(m.description)}</div>
        ${inputs ? `<div class="params">${inputs}</div>` : ''}`;
      det.append(row);
    }
    list.append(det);
  }
}

function applyDefaultChecks() {
  for (const m of state.measures) {
    const box = $(`m-${m.id}`);
    if (!box) continue;
    box.checked = DEFAULTS.includes(m.id) && (!m.labels || !!state.labels);
  }
  renderData();
}

/** The specs chosen on the page, as spec strings (params only where changed). */
function chosenSpecs() {
  const specs = [];
  for (const row of document.querySelectorAll('.measure')) {
    if (!row.querySelector('input[type=checkbox]').checked) continue;
    const changed = [];
    for (const el of row.querySelectorAll('[data-param]')) {
      const v = String(el.value).trim();
      if (v === '') throw new Error(`${row.dataset.id}: ${el.dataset.param} is empty`);
      if (v !== el.dataset.default) changed.push(`${el.dataset.param}=${v}`);
    }
    specs.push(changed.length ? `${row.dataset.id}:${changed.join(',')}` : row.dataset.id);
  }
  for (const line of $('extra-specs').value.split('\n')) {
    if (line.trim()) specs.push(line.trim());
  }
  return specs;
}

function request(specs, local) {
  const strip = (m) => ({ name: m.name, rows: m.rows, cols: m.cols, data: m.data });
  return {
    high: strip(state.high),
    lows: state.lows.map(strip),
    labels: state.labels ? state.labels.data : null,
    specs,
    local,
    backend: $('backend').value,
    numerics: $('numerics').value,
  };
}

// ---------------------------------------------------------------- runs

async function evaluate(specs, local) {
  clearError();
  setStatus('running');
  $('results-json').textContent = '';
  const backend = $('backend').value === 'cpu' ? 'the CPU (WebAssembly)' : 'WebGPU';
  setBusy(true, `Evaluating ${specs.length ? specs.join(', ') : 'the default measures'} on ${backend}…`);
  const snapshot = { lows: [...state.lows], labels: state.labels };
  try {
    const { value, ms } = await call('evaluate', request(specs, local));
    state.json = value;
    state.result = JSON.parse(value);
    state.run = snapshot;
    $('results-json').textContent = value;
    renderResults(ms);
    markStale(false);
    $('run-status').innerHTML = `<span>Done in ${(ms / 1000).toFixed(2)} s.</span>`;
    return 'done';
  } catch (e) {
    if (e.cancelled) {
      $('run-status').innerHTML = '<span>Cancelled.</span>';
      return 'cancelled';
    }
    showError(e.message);
    $('run-status').innerHTML = `<span class="msg error">${esc(e.message)}</span>`;
    return 'error';
  } finally {
    setBusy(false);
  }
}

async function evaluateAndCurve(specs, local) {
  let status = await evaluate(specs, local);
  const autoMax = $('curve-measure').value === 'coranking' ? CORANKING_AUTO_MAX_N : CURVE_AUTO_MAX_N;
  if (status === 'done' && state.high.rows <= autoMax && (await computeCurve()) === 'cancelled') status = 'cancelled';
  setStatus(status);
}

function fmt(v) {
  if (v === null || v === undefined) return '—';
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(3);
  return v.toFixed(4);
}

function renderResults(ms) {
  const res = state.result;
  const run = res.run;
  const about = Object.fromEntries(state.measures.map((m) => [m.id, m.description]));

  // Backend, adapter, timings.
  const chips = [];
  const gpu = run.backend === 'gpu';
  let adapter = '';
  if (run.adapter) {
    // Browsers hide adapter names from wgpu; the page asked navigator.gpu itself.
    const b = state.browserAdapter;
    const seen = b ? [b.vendor, b.architecture, b.description].filter(Boolean).join(' ') + (b.fallback ? ' (software fallback)' : '') : '';
    adapter = `${run.adapter.name || seen || 'unnamed adapter'} · ${run.adapter.backend}${run.adapter.device_type ? ' · ' + run.adapter.device_type : ''}`;
  }
  chips.push(`<div class="chip ${run.fallback_reason ? 'fallback' : gpu ? 'gpu' : 'cpu'}"><span class="k">served by</span><span class="v">${gpu ? 'GPU (WebGPU)' : 'CPU (WebAssembly)'}</span></div>`);
  if (adapter) chips.push(`<div class="chip"><span class="k">adapter</span><span class="v">${esc(adapter)}</span></div>`);
  chips.push(`<div class="chip"><span class="k">numerics</span><span class="v">${esc(run.numerics)}</span></div>`);
  chips.push(`<div class="chip"><span class="k">points</span><span class="v">${run.n} · ${run.dim_high}-D → ${run.dims_low.join(', ')}-D</span></div>`);
  const t = run.timings;
  const start = run.gpu ? ` · device start ${run.gpu.device_start_s.toFixed(2)} s` : '';
  chips.push(`<div class="chip" title="validate ${t.validate_s.toFixed(3)} s, neighbours/ranks ${t.resources_s.toFixed(3)} s, measures ${t.measures_s.toFixed(3)} s${start}; ${(ms / 1000).toFixed(2)} s in the worker">
    <span class="k">time</span><span class="v">${t.total_s.toFixed(2)} s</span> <span class="muted">(kNN/ranks ${t.resources_s.toFixed(2)} s · measures ${t.measures_s.toFixed(2)} s${start})</span></div>`);
  if (run.fallback_reason) {
    chips.push(`<div class="chip fallback" style="width:100%"><span class="k">fallback</span>${esc(run.fallback_reason)}</div>`);
  }
  const served = (run.served || []).map((s) => `${s.output}: ${s.backend} (${s.numerics})`).join(' · ');
  if (served) chips.push(`<div class="served">${esc(served)}</div>`);
  $('run-info').innerHTML = chips.join('');

  if (run.fallback_reason && run.backend_requested !== 'cpu') {
    showNotice('<b>WebGPU was not used: the CPU (WebAssembly) served this run.</b> The numbers are the same — faithful\'s CPU reference is exact — it is just slower. ' +
      'Chrome or Edge 113+ (and Firefox or Safari with WebGPU on) use the GPU; WebGPU also needs a secure context (https or localhost). ' +
      `<details><summary>Why</summary>${esc(run.fallback_reason)}</details>`);
  }

  // Score table: a group row per spec, a row per output key, a column per projection.
  const projs = res.projections;
  let html = '<table class="scores"><thead><tr><th>measure</th>';
  for (const p of projs) html += `<th style="text-align:right">${esc(p.name)}</th>`;
  html += '</tr></thead><tbody>';
  const first = projs[0]?.scores ?? [];
  first.forEach((score, s) => {
    const ps = Object.entries(score.params).map(([k, v]) => `${k}=${v}`).join(', ');
    html += `<tr class="group"><td colspan="${projs.length + 1}">${esc(score.id)}${ps ? ` <span class="muted">(${esc(ps)})</span>` : ''}<span class="about">${esc(about[score.id] ?? '')}</span></td></tr>`;
    for (const key of Object.keys(score.values)) {
      html += `<tr><td class="key">${esc(key)}</td>`;
      for (const p of projs) {
        const v = p.scores[s]?.values[key];
        const bar = Number.isFinite(v) && v >= 0 && v <= 1
          ? ` style="background: linear-gradient(to left, #9fb0ff ${(v * 100).toFixed(1)}%, #eef0f6 ${(v * 100).toFixed(1)}%) right 10px bottom 3px / calc(100% - 20px) 3px no-repeat"` : '';
        html += `<td class="num" title="${esc(String(v))}"${bar}>${fmt(v)}</td>`;
      }
      html += '</tr>';
    }
  });
  html += '</tbody></table>';
  $('results-table').innerHTML = html;

  renderScatterChoices();
  drawScatterNow();
  updateButtons();
}

// ---------------------------------------------------------------- scatterplot

function renderScatterChoices() {
  const projSel = $('scatter-proj');
  const prev = projSel.value;
  projSel.innerHTML = state.result.projections
    .map((p, i) => ({ p, i, cols: state.run.lows[i]?.cols ?? 0 }))
    .filter(({ cols }) => cols >= 2)
    .map(({ p, i, cols }) => `<option value="${i}">${esc(p.name)}${cols > 2 ? ` (first 2 of ${cols} columns)` : ''}</option>`)
    .join('');
  if ([...projSel.options].some((o) => o.value === prev)) projSel.value = prev;
  renderColourChoices();
}

function renderColourChoices() {
  const sel = $('scatter-colour');
  const prev = sel.value;
  const p = state.result.projections[Number($('scatter-proj').value)];
  const opts = [];
  for (const [s, score] of (p?.scores ?? []).entries()) {
    const ps = Object.entries(score.params).map(([k, v]) => `${k}=${v}`).join(',');
    for (const key of Object.keys(score.local ?? {})) opts.push([`v:${s}:${key}`, `${key} (${score.id}${ps ? ' ' + ps : ''})`]);
  }
  if (state.run.labels) opts.push(['label', 'label']);
  opts.push(['none', 'no colour']);
  sel.innerHTML = opts.map(([v, t]) => `<option value="${esc(v)}">${esc(t)}</option>`).join('');
  if (opts.some(([v]) => v === prev)) sel.value = prev;
}

/**
 * The colour scale and legend of a per-point output, as its kind reads: a `mean`, `score`,
 * `partial_mean` or `count` on its own range (low values, the poorly kept points of a score,
 * drawn on top); a `sum` or `share` from 0 to its largest part (a part of a total, not a score
 * on a 0–1 scale; large parts on top), a `share` in per cent; a `log_ratio` on a diverging scale
 * symmetric around 0. Points without a value (null) are grey rings, counted in the legend.
 */
function localColour(key, kind, values) {
  let min = Infinity;
  let max = -Infinity;
  let total = 0;
  let count = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    min = Math.min(min, v);
    max = Math.max(max, v);
    total += v;
    count += 1;
  }
  const missing = values.length - count;
  const none = missing ? ` · ${missing} points without a value (grey rings)` : '';
  const bar = (g, lo, hi) => `<span>${lo}</span><span class="bar" style="background:${g}"></span><span>${hi}</span>`;
  const title = `<span class="title">${esc(key)}</span><span class="tag">${esc(kind)}</span>`;
  if (kind === 'sum' || kind === 'share') {
    const pct = (v) => `${fmt(100 * v)} %`;
    const colour = { kind: 'value', values, min: 0, max, key, scale: 'sequential', top: 'high' };
    const legend = kind === 'share'
      ? `${title}${bar(viridisGradient(), '0 %', pct(max))}<span>share of the total (sums to 100 %) · large parts on top</span>`
      : `${title}${bar(viridisGradient(), '0', fmt(max))}<span>each point's part of the total ${fmt(total)} · large parts on top</span>`;
    return { colour, legend };
  }
  if (kind === 'log_ratio') {
    const m = Math.max(Math.abs(min), Math.abs(max), 1e-300);
    const colour = { kind: 'value', values, min: -m, max: m, key, scale: 'diverging', top: 'far' };
    return { colour, legend: `${title}${bar(divergingGradient(), fmt(-m), fmt(m))}<span>0: alike in both spaces${none}</span>` };
  }
  const colour = { kind: 'value', values, min, max, key, scale: 'sequential', top: 'low' };
  const mean = count ? total / count : NaN;
  // Counts are whole numbers: shown as such.
  const num = kind === 'count' ? (v) => String(Math.round(v)) : fmt;
  const what = kind === 'count' ? `total ${num(total)}` : kind === 'score' ? 'per-point score' : `mean ${fmt(mean)}`;
  return { colour, legend: `${title}${bar(viridisGradient(), num(min), num(max))}<span>${what} · low values drawn on top${none}</span>` };
}

function drawScatterNow() {
  const canvas = $('scatter');
  const overlay = $('scatter-overlay');
  const i = Number($('scatter-proj').value);
  const low = state.run?.lows[i];
  if (!state.result || !low || $('scatter-proj').value === '') {
    $('scatter-empty').hidden = false;
    return;
  }
  $('scatter-empty').hidden = true;
  const n = low.rows;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    x[r] = low.data[r * low.cols];
    y[r] = low.data[r * low.cols + 1];
  }
  const choice = $('scatter-colour').value;
  let colour = { kind: 'none' };
  const legend = $('legend');
  if (choice.startsWith('v:')) {
    const [, s, key] = choice.split(':');
    const score = state.result.projections[i].scores[Number(s)];
    const values = Array.from(score.local[key], (v) => (v === null ? NaN : v));
    const kind = score.local_kinds?.[key] ?? 'mean';
    ({ colour, legend: legend.innerHTML } = localColour(key, kind, values));
  } else if (choice === 'label') {
    const labels = state.run.labels.data;
    const classes = new Map([...new Set(labels)].sort((a, b) => a - b).map((l, k) => [l, k]));
    colour = { kind: 'label', labels, classes };
    const shown = [...classes.keys()].slice(0, 20);
    legend.innerHTML = `<span class="title">label</span>` + shown.map((l) => `<span><i class="sw" style="background:${CATEGORICAL[classes.get(l) % CATEGORICAL.length]}"></i>${esc(l)}</span>`).join('') +
      (classes.size > shown.length ? `<span>… ${classes.size} classes</span>` : '');
  } else {
    legend.innerHTML = '';
  }
  state.scatter = { ...drawScatter(canvas, x, y, colour), colour, index: i };
  const ov = overlay.getContext('2d');
  const dpr = window.devicePixelRatio || 1;
  overlay.width = Math.round(overlay.clientWidth * dpr);
  overlay.height = Math.round(overlay.clientHeight * dpr);
  ov.setTransform(dpr, 0, 0, dpr, 0, 0);
}

function wireScatterHover() {
  const overlay = $('scatter-overlay');
  const tip = $('tooltip');
  let frame = 0;
  overlay.addEventListener('mousemove', (e) => {
    if (!state.scatter || frame) return;
    const { offsetX, offsetY } = e;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const sc = state.scatter;
      const ctx = overlay.getContext('2d');
      ctx.clearRect(0, 0, overlay.width, overlay.height);
      const i = nearest(sc.sx, sc.sy, offsetX, offsetY, 10);
      if (i < 0) {
        tip.hidden = true;
        return;
      }
      markPoint(overlay, sc.sx, sc.sy, i);
      let text = `#${i}`;
      if (state.run.labels) text += ` · label ${state.run.labels.data[i]}`;
      if (sc.colour.kind === 'value') text += ` · ${sc.colour.key} ${fmt(sc.colour.values[i])}`;
      tip.textContent = text;
      tip.style.left = `${sc.sx[i]}px`;
      tip.style.top = `${sc.sy[i]}px`;
      tip.hidden = false;
    });
  });
  overlay.addEventListener('mouseleave', () => {
    overlay.getContext('2d').clearRect(0, 0, overlay.width, overlay.height);
    tip.hidden = true;
  });
}

// ---------------------------------------------------------------- curve across k

// coranking first: every K up to k_max from one exact pass (R_NX on a log-K axis, with T and C).
const CURVE_MEASURES = ['coranking', 'tnc', 'mrre', 'lcmc', 'nh', 'ca_tnc'];
// The co-ranking pass sorts every row in both spaces (O(n² log n)): run it by itself only below this.
const CORANKING_AUTO_MAX_N = 3000;

function renderCurveChoices() {
  const sel = $('curve-measure');
  const prev = sel.value;
  const ms = state.measures
    .filter((m) => CURVE_MEASURES.includes(m.id) && m.params.some((p) => p.name === 'k' || p.name === 'k_max') && (!m.labels || state.labels))
    .sort((a, b) => CURVE_MEASURES.indexOf(a.id) - CURVE_MEASURES.indexOf(b.id));
  const label = (m) => (m.id === 'coranking' ? 'co-ranking — R_NX for every K (one pass), with T & C' : `${m.id} — ${m.keys.join(' & ')}`);
  sel.innerHTML = ms.map((m) => `<option value="${m.id}">${esc(label(m))}</option>`).join('');
  if (ms.some((m) => m.id === prev)) sel.value = prev;
}

function curveKs(id, n) {
  const from = Math.max(1, Math.round(Number($('k-from').value)));
  const to = Math.round(Number($('k-to').value));
  const step = Math.max(1, Math.round(Number($('k-step').value)));
  if (id === 'coranking') {
    // Every K from one pass (R_NX needs K <= n - 2); the step does not apply.
    const ks = [];
    for (let k = from; k <= Math.min(to, n - 2); k++) ks.push(k);
    return ks;
  }
  const limit = id === 'tnc' || id === 'ca_tnc' ? Math.ceil(n / 2) - 1 : n - 1; // T&C needs k < n/2
  const ks = [];
  for (let k = from; k <= Math.min(to, limit) && ks.length < 200; k += step) ks.push(k);
  return ks;
}

async function computeCurve() {
  const id = $('curve-measure').value;
  const status = $('curve-status');
  if (!id || !state.high) return;
  const ks = curveKs(id, state.high.rows);
  if (ks.length === 0) {
    status.textContent = 'No valid k in this range for this data.';
    return;
  }
  document.body.dataset.curve = 'running';
  clearInterval(curveTicker);
  const t0 = performance.now();
  const tick = () => {
    status.innerHTML = `<span class="spinner"></span><span>${esc(id)} for k = ${ks[0]}…${ks[ks.length - 1]} (${ks.length} values)… ${((performance.now() - t0) / 1000).toFixed(1)} s</span>`;
  };
  tick();
  curveTicker = setInterval(tick, 100);
  const wasBusy = state.busy;
  state.busy = true;
  updateButtons();
  try {
    // One run with a spec per k: the neighbours and ranks are computed once, for the largest k.
    // (coranking: one spec, k_max = the largest K, every curve in one pass.)
    const specs = id === 'coranking' ? [`coranking:k_max=${ks[ks.length - 1]}`] : ks.map((k) => `${id}:k=${k}`);
    const { value, ms } = await call('evaluate', request(specs, false));
    const res = JSON.parse(value);
    state.curve = { id, ks, res };
    drawCurveNow();
    status.textContent = `${res.run.backend === 'gpu' ? 'GPU (WebGPU)' : 'CPU (WebAssembly)'} · ${ks.length} values of k in ${(ms / 1000).toFixed(2)} s`;
    document.body.dataset.curve = 'done';
  } catch (e) {
    status.innerHTML = e.cancelled ? '<span>Cancelled.</span>' : `<span class="msg error">${esc(e.message)}</span>`;
    document.body.dataset.curve = e.cancelled ? 'cancelled' : 'error';
  } finally {
    clearInterval(curveTicker);
    state.busy = wasBusy;
    updateButtons();
  }
  return document.body.dataset.curve;
}
let curveTicker = null;

function drawCurveNow() {
  if (!state.curve) return;
  const { id, ks, res } = state.curve;
  $('curve-empty').hidden = true;
  const series = [];
  if (id === 'coranking') {
    // Curves are indexed K - 1; T and C stop at the largest K < n/2.
    res.projections.forEach((p, pi) => {
      const sc = p.scores[0];
      const pick = (key) => ks.map((k) => sc.curves[key][k - 1] ?? NaN);
      const colour = CATEGORICAL[pi % CATEGORICAL.length];
      series.push({ label: `${p.name} · R_NX (AUC ${fmt(sc.values.auc_rnx)}, K ≤ ${ks[ks.length - 1]})`, colour, dash: false, values: pick('rnx') });
      series.push({ label: `${p.name} · trustworthiness`, colour, dash: true, values: pick('trustworthiness') });
      series.push({ label: `${p.name} · continuity`, colour, dash: [2, 3], values: pick('continuity') });
    });
    drawCurve($('curve'), ks, series, { yLabel: 'R_NX, T, C', xLabel: 'K (log scale)', logX: true });
    $('curve-legend').innerHTML = series.map((s) => `<span><i class="line${s.dash ? ' dash' : ''}" style="border-color:${s.colour}"></i>${esc(s.label)}</span>`).join('');
    return;
  }
  res.projections.forEach((p, pi) => {
    const keys = Object.keys(p.scores[0]?.values ?? {});
    keys.forEach((key, ki) => {
      series.push({
        label: `${p.name} · ${key}`,
        colour: CATEGORICAL[pi % CATEGORICAL.length],
        dash: ki > 0,
        values: p.scores.map((s) => (s.values[key] === null ? NaN : s.values[key])),
      });
    });
  });
  drawCurve($('curve'), ks, series, { yLabel: id });
  $('curve-legend').innerHTML = series.map((s) => `<span><i class="line${s.dash ? ' dash' : ''}" style="border-color:${s.colour}"></i>${esc(s.label)}</span>`).join('');
}

// ---------------------------------------------------------------- start

function download(text = state.json, name = 'faithful-results.json') {
  const blob = new Blob([text], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// ---------------------------------------------------------------- benchmark tab

function showTab(bench) {
  $('evaluate-panel').hidden = bench;
  $('bench-panel').hidden = !bench;
  $('tab-evaluate').classList.toggle('active', !bench);
  $('tab-bench').classList.toggle('active', bench);
  $('tab-evaluate').setAttribute('aria-selected', String(!bench));
  $('tab-bench').setAttribute('aria-selected', String(bench));
}

function benchRequest() {
  const list = (id, what, min) => {
    const v = $(id).value.split(',').map((x) => x.trim()).filter(Boolean).map(Number);
    if (!v.length || v.some((x) => !Number.isInteger(x) || x < min)) throw new Error(`${what}: integers >= ${min}, comma-separated`);
    return v;
  };
  const int = (id, what) => {
    const v = Number($(id).value);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${what}: an integer >= 1`);
    return v;
  };
  const backends = [];
  if ($('bench-cpu').checked) backends.push('cpu');
  if ($('bench-webgpu').checked) backends.push('webgpu');
  if (!backends.length) throw new Error('Choose at least one backend.');
  return { sizes: list('bench-sizes', 'Sizes', 3), dims: list('bench-dims', 'Dimensions', 2), k: int('bench-k', 'k'), repeat: int('bench-repeat', 'Repeats'), backends };
}

function renderBench(receipt) {
  const f = (v, p = 4) => (v === null || v === undefined ? '–' : v.toFixed(p));
  const m = receipt.machine;
  const adapters = receipt.adapters.map((a) => `${esc(a.name || 'WebGPU')} (${esc(a.backend)}, ${esc(a.device_type)})`).join(', ') || 'none';
  $('bench-info').innerHTML = `<span>${esc(m.os)}</span> · <span>${m.cores} logical CPUs</span> · <span>faithful ${esc(m.faithful_version)} · wgpu ${esc(m.wgpu_version ?? '?')}</span> · <span>adapter: ${adapters}</span> · <span>k = ${receipt.settings.k}, warm = median of ${receipt.settings.repeat}</span>`;
  const rows = receipt.rows.map((r) => `<tr><td>${esc(r.kernel)}</td><td>${esc(r.backend)}</td><td>${esc(r.adapter)}</td>
    <td class="num">${r.n}</td><td class="num">${r.d}</td><td class="num">${f(r.cold_s)}</td><td class="num">${f(r.warm_s)}</td>
    <td class="num">${f(r.pairs_per_s === null ? null : r.pairs_per_s / 1e6, 1)}</td><td class="num">${f(r.gflops, 2)}</td>
    <td class="parity-${esc(r.parity)}" title="${esc(r.error ?? r.served ?? '')}">${esc(r.parity)}${r.error ? `: ${esc(r.error)}` : ''}</td></tr>`);
  $('bench-table').innerHTML = `<table class="scores bench"><thead><tr><th>kernel</th><th>backend</th><th>adapter</th><th>n</th><th>D</th>
    <th>cold s</th><th>warm s</th><th>Mpairs/s</th><th>GFLOP/s</th><th>parity</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

async function runBench() {
  let request;
  try {
    request = benchRequest();
  } catch (e) {
    $('bench-error').textContent = e.message;
    $('bench-error').hidden = false;
    return false;
  }
  $('bench-error').hidden = true;
  setStatus('running');
  state.busy = true;
  updateButtons();
  const el = $('bench-status');
  const t0 = performance.now();
  let what = 'starting';
  let frac = '';
  const tick = () => {
    el.innerHTML = `<span class="spinner"></span><span>${esc(frac)} ${esc(what)} · ${((performance.now() - t0) / 1000).toFixed(1)} s</span>`;
  };
  tick();
  const timer = setInterval(tick, 200);
  let ok = false;
  let cancelled = false;
  try {
    const { value } = await call('bench', request, (p) => {
      what = p.what;
      frac = `${p.done}/${p.total}`;
      tick();
    });
    state.benchJson = value;
    $('bench-json').textContent = value;
    const receipt = JSON.parse(value);
    renderBench(receipt);
    const bad = receipt.rows.filter((r) => r.parity === 'differs' || r.parity === 'error').length;
    el.textContent = `done in ${((performance.now() - t0) / 1000).toFixed(1)} s` + (bad ? ` · ${bad} row(s) differ or failed` : ' · every GPU result identical to the CPU reference');
    ok = true;
  } catch (e) {
    cancelled = !!e.cancelled;
    if (!cancelled) {
      $('bench-error').textContent = `The benchmark failed: ${e.message}`;
      $('bench-error').hidden = false;
    }
    el.textContent = cancelled ? 'Cancelled.' : '';
  } finally {
    clearInterval(timer);
    state.busy = false;
    updateButtons();
  }
  setStatus(ok ? 'done' : cancelled ? 'cancelled' : 'error');
  return ok;
}

function wireBench() {
  $('tab-evaluate').addEventListener('click', () => showTab(false));
  $('tab-bench').addEventListener('click', () => showTab(true));
  $('bench-run').addEventListener('click', runBench);
  $('bench-cancel').addEventListener('click', cancelRun);
  $('bench-download').addEventListener('click', () => download(state.benchJson, 'faithful-bench-browser.json'));
  for (const [key, id] of [['sizes', 'bench-sizes'], ['dims', 'bench-dims'], ['k', 'bench-k'], ['repeat', 'bench-repeat']]) {
    if (params.get(key)) $(id).value = params.get(key);
  }
  const backends = params.get('backends');
  if (backends) {
    const list = backends.split(',');
    $('bench-cpu').checked = list.includes('cpu');
    $('bench-webgpu').checked = list.includes('webgpu') || list.includes('gpu');
  }
}

function wire() {
  wireBench();
  wireDrops();
  wireScatterHover();
  $('load-example').addEventListener('click', loadExample);
  $('run').addEventListener('click', async () => {
    let specs;
    try {
      specs = chosenSpecs();
    } catch (e) {
      showError(e.message);
      return;
    }
    if (!specs.length) {
      showError('Choose at least one measure.');
      return;
    }
    await evaluateAndCurve(specs, $('local').checked);
  });
  $('curve-run').addEventListener('click', computeCurve);
  $('cancel').addEventListener('click', cancelRun);
  $('download').addEventListener('click', () => download());
  $('scatter-proj').addEventListener('change', () => {
    renderColourChoices();
    drawScatterNow();
  });
  $('scatter-colour').addEventListener('change', drawScatterNow);
  let resize = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resize);
    resize = requestAnimationFrame(() => {
      if (state.result) drawScatterNow();
      drawCurveNow();
    });
  });
}

async function main() {
  setStatus('loading');
  wire();
  const bench = params.get('bench') === '1';
  if (bench) showTab(true);
  startWorker();
  let info;
  try {
    ({ value: info } = await call('init'));
  } catch (e) {
    showError(e.message);
    $('gpu-pill').textContent = 'not loaded';
    setStatus('error');
    return;
  }
  state.measures = info.measures;
  state.example = info.example;
  $('version').textContent = `v${info.version}`;
  const pill = $('gpu-pill');
  state.browserAdapter = info.adapter;
  if (info.webgpu) {
    const a = info.adapter;
    pill.textContent = `WebGPU: ${[a.vendor, a.architecture].filter(Boolean).join(' ') || 'available'}`;
    pill.title = a.fallback ? 'a software (fallback) adapter' : 'a hardware adapter';
    pill.className = 'pill ok';
  } else {
    pill.textContent = 'no WebGPU · CPU';
    pill.className = 'pill no';
    showNotice('<b>No WebGPU in this browser.</b> faithful runs on its exact CPU reference compiled to WebAssembly — the same numbers, just slower. ' +
      'Chrome or Edge 113+ (and Firefox or Safari with WebGPU on) use the GPU; WebGPU also needs a secure context (https or localhost).');
  }
  renderMeasures();
  renderData();
  applyDefaultChecks();

  const backend = params.get('backend');
  if (backend === 'cpu' || backend === 'webgpu') $('backend').value = backend;
  else if (backend) dataMessage(`unknown backend '${backend}' in the address (use webgpu or cpu)`, 'warn');
  const example = params.get('example');
  if (example === 'default') loadExample();
  else if (example) dataMessage(`unknown example '${example}' in the address (only 'default')`, 'warn');
  state.ready = true;
  setStatus('ready');
  updateButtons();

  if (bench) {
    // Without WebGPU the WebGPU rows could only say so: run the CPU unless the address asks.
    if (!info.webgpu && !params.get('backends')) $('bench-webgpu').checked = false;
    if (params.get('autorun') === '1') await runBench();
    return;
  }
  if (params.get('autorun') === '1' && !params.has('view')) {
    if (!state.high || !state.lows.length) {
      showError('autorun=1 needs data: add example=default to the address.');
      setStatus('error');
      return;
    }
    // Exactly what `faithful measure --local` evaluates with no files.
    await evaluateAndCurve(state.example.specs, true);
  }
}

main();
