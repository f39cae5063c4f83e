// The Live tab: umap-js (npm, web/node_modules) optimises the bundled digits on the main thread;
// a resident Session of the faithful-dr package scores the current embedding off the main
// thread — in its worker client (pkg/worker.js) for one worker, on its worker pool
// (pkg/index.js, Session.create({ workers })) for more: T&C at k, local trustworthiness colouring
// the scatterplot, scores plotted against the epoch, evaluations per second, the serving backend
// and the workers. UMAP keeps optimising while a score is computed ("keep up"): a new score
// starts, at least `every` epochs after the last, as soon as the previous one is back, so the
// page scores every epoch when the scorer is fast enough and skips epochs when it is not; with
// keep-up off each score waits (exactly every `every` epochs).
//
// Automation: ?live=1[&autorun=1][&epochs=N][&every=M][&k=K][&backend=webgpu|cpu][&workers=W|auto]
// [&keepup=0|1] opens the tab (and runs it); when the run ends <body data-status> is "done" (or
// "error", "cancelled") and #live-json holds the evaluations: [{epoch, trustworthiness,
// continuity, ms, backend, workers}].

import init, { Session, exampleData } from './pkg/index.js';
import { workerCount } from './pkg/pool.js';
import { FaithfulWorker } from './pkg/worker.js';
import { drawScatter, drawCurve } from './plots.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const live = params.get('live') === '1';
let controller = null;

function setStatus(s) {
  if (live) document.body.dataset.status = s;
}

function show(on) {
  $('live-panel').hidden = !on;
  $('tab-live').classList.toggle('active', on);
  $('tab-live').setAttribute('aria-selected', String(on));
  if (on) {
    $('evaluate-panel').hidden = true;
    $('bench-panel').hidden = true;
    for (const id of ['tab-evaluate', 'tab-bench']) {
      $(id).classList.remove('active');
      $(id).setAttribute('aria-selected', 'false');
    }
  }
}

/** umap-js's UMD build (window.UMAP.UMAP), loaded once as a classic script. */
let umapClass = null;
async function loadUmap() {
  if (!umapClass) {
    await new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = new URL('./node_modules/umap-js/lib/umap-js.min.js', import.meta.url).href;
      s.onload = resolve;
      s.onerror = () => reject(new Error('could not load umap-js (web/node_modules: run web/build.sh)'));
      document.head.append(s);
    });
    umapClass = window.UMAP.UMAP;
  }
  return umapClass;
}

/** A seeded generator for UMAP's random initialisation: runs repeat. */
function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function int(id, what) {
  const v = Number($(id).value);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${what}: an integer >= 1`);
  return v;
}

function draw(embedding, local, records, k) {
  const x = embedding.map((p) => p[0]);
  const y = embedding.map((p) => p[1]);
  const colour = local ? { kind: 'value', values: local, min: Math.min(...local), max: Math.max(...local) } : { kind: 'none' };
  drawScatter($('live-scatter'), x, y, colour);
  const epochs = records.map((r) => r.epoch);
  drawCurve($('live-chart'), epochs, [
    { values: records.map((r) => r.trustworthiness), colour: '#4e79a7' },
    { values: records.map((r) => r.continuity), colour: '#e15759', dash: true },
  ], { xLabel: 'epoch', yLabel: `T & C (k = ${k})` });
}

/** A scorer on `workers` workers: the worker client's session for one, the pool for more. */
async function scorer(high, labels, backend, workers) {
  if (workers <= 1) {
    const worker = new FaithfulWorker();
    const session = await worker.createSession({ high, labels, backend });
    return {
      session,
      workers: 1,
      measure: (low, k, signal) => session.measure({ low, specs: [`tnc:k=${k}`], local: true, signal }, [low.data.buffer]),
      free: () => {
        session.free();
        worker.terminate();
      },
    };
  }
  const session = await Session.create({ high, labels, backend, workers });
  return {
    session,
    workers: session.workers,
    measure: (low, k, signal) => session.measure({ low, specs: [`tnc:k=${k}`], local: true, signal }),
    free: () => session.free(),
  };
}

async function run() {
  $('live-error').hidden = true;
  $('live-run').disabled = true;
  $('live-cancel').hidden = false;
  setStatus('running');
  controller = new AbortController();
  const { signal } = controller;
  const records = [];
  let s = null;
  try {
    const epochs = int('live-epochs', 'Epochs');
    const every = int('live-every', 'Score every');
    const k = int('live-k', 'k');
    const backend = $('live-backend').value;
    const keepUp = $('live-keepup').checked;
    const UMAP = await loadUmap();
    await init();
    const asked = $('live-workers').value;
    const workers = await workerCount(asked === 'auto' ? 'auto' : Number(asked));
    const ex = exampleData();
    const { rows: n, cols } = ex.high;
    const X = Array.from({ length: n }, (_, i) => Array.from(ex.high.data.subarray(i * cols, (i + 1) * cols)));
    s = await scorer(ex.high, ex.labels, backend, workers);
    const served = `${s.session.backend === 'gpu' ? 'WebGPU' : 'CPU (wasm)'} on ${s.workers} worker${s.workers > 1 ? 's' : ''}`;
    const umap = new UMAP({ nComponents: 2, nNeighbors: 15, nEpochs: epochs, random: seeded(42) });
    const total = umap.initializeFit(X);
    const t0 = performance.now();
    let scoringMs = 0;
    let last = 0; // the last epoch scored, or being scored
    let inFlight = null;
    let failed = null;
    const score = (epoch) => {
      const embedding = umap.getEmbedding();
      const low = { data: Float64Array.from(embedding.flat()), rows: n, cols: 2, name: `epoch ${epoch}` };
      const t = performance.now();
      last = epoch;
      return s.measure(low, k, signal).then((r) => {
        const ms = performance.now() - t;
        scoringMs += ms;
        const tnc = r.projections[0].scores[0];
        records.push({ epoch, trustworthiness: tnc.values.trustworthiness, continuity: tnc.values.continuity, ms, backend: r.run.backend, workers: r.run.workers ?? s.workers });
        draw(embedding, tnc.local.local_trustworthiness, records, k);
        const perS = (records.length / scoringMs) * 1000;
        $('live-info').textContent = `epoch ${epoch}/${total} · served by ${served} · ${perS.toFixed(2)} evaluations/s`;
        $('live-status').textContent = `epoch ${epoch}: T ${tnc.values.trustworthiness.toFixed(4)}, C ${tnc.values.continuity.toFixed(4)} (${ms.toFixed(0)} ms)`;
        $('live-json').textContent = JSON.stringify(records);
      });
    };
    for (let epoch = 0; epoch < total; ) {
      epoch = umap.step();
      if (epoch - last >= every || (epoch === total && last !== total)) {
        // Without keep-up, and for the last epoch, the previous score comes back first.
        if (!keepUp || epoch === total) await inFlight;
        if (!inFlight && !failed) {
          inFlight = score(epoch).then(
            () => (inFlight = null),
            (e) => {
              failed = e;
              inFlight = null;
            },
          );
          if (!keepUp) await inFlight;
        }
      }
      if (failed) throw failed;
      // Let the page paint, and the scores come back, between epochs.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await inFlight;
    if (failed) throw failed;
    $('live-status').textContent += ` · ${records.length} evaluations in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
    setStatus('done');
  } catch (e) {
    if (e.name === 'AbortError') {
      $('live-status').textContent = 'Cancelled.';
      setStatus('cancelled');
    } else {
      $('live-error').textContent = e.message;
      $('live-error').hidden = false;
      setStatus('error');
    }
  } finally {
    s?.free();
    controller = null;
    $('live-run').disabled = false;
    $('live-cancel').hidden = true;
  }
}

$('tab-live').addEventListener('click', () => show(true));
for (const id of ['tab-evaluate', 'tab-bench']) $(id).addEventListener('click', () => show(false));
$('live-run').addEventListener('click', run);
$('live-cancel').addEventListener('click', () => controller?.abort());
for (const [key, id] of [['epochs', 'live-epochs'], ['every', 'live-every'], ['k', 'live-k']]) {
  if (params.get(key)) $(id).value = params.get(key);
}
if (live) {
  if (params.get('backend') === 'cpu' || params.get('backend') === 'webgpu') $('live-backend').value = params.get('backend');
  if (params.get('workers')) $('live-workers').value = params.get('workers');
  if (params.get('keepup')) $('live-keepup').checked = params.get('keepup') === '1';
  show(true);
  setStatus('ready');
  if (params.get('autorun') === '1') run();
}
