// End-to-end test of web/ in headless Chromium (run by scripts/test_browser.sh, which builds the
// wasm package and the native CLI, serves web/ and sets the variables below).
//
//   FAITHFUL_URL  the served page, e.g. http://127.0.0.1:41234
//   FAITHFUL_CLI  the native CLI (target/release/faithful)
//   FAITHFUL_OUT  where the screenshot goes (the repository's ignored out/)
//   CHROMIUM      the browser (default /usr/bin/chromium); CI=true turns a missing WebGPU
//                 adapter into a failure instead of a skip.
//
// The page runs the bundled example with autorun, on WebGPU and on the wasm CPU, and both
// results must equal the native CLI's (`faithful measure --local --json --backend cpu`) bit for
// bit: every score and every local value. The benchmark tab (?bench=1&autorun=1&sizes=300) runs
// the kernel suite on the wasm CPU and WebGPU: its receipt has the native `faithful bench --json`
// keys and every GPU row is identical to the CPU reference.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLAGS, launchChromium } from './flags.mjs';

const BASE = process.env.FAITHFUL_URL;
const CLI = process.env.FAITHFUL_CLI;
const OUT = process.env.FAITHFUL_OUT ?? 'out';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CI = ['true', '1'].includes(String(process.env.CI).toLowerCase());
const RUN_TIMEOUT_MS = 10 * 60 * 1000;

const RANK_BASED = new Set(['tnc', 'mrre', 'lcmc', 'nh']);

let browser;
let native; // {json, result}

before(async () => {
  assert.ok(BASE, 'FAITHFUL_URL is not set (run scripts/test_browser.sh)');
  assert.ok(CLI, 'FAITHFUL_CLI is not set (run scripts/test_browser.sh)');
  const json = execFileSync(CLI, ['measure', '--local', '--json', '--backend', 'cpu'], { encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
  native = { json, result: JSON.parse(json) };
  browser = await launchChromium(CHROMIUM);
  console.log(`# browser: Chromium ${browser.version()} (${CHROMIUM})`);
});

after(async () => {
  await browser?.close();
});

async function openPage(query, initScript) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  if (initScript) await page.addInitScript(initScript);
  const log = [];
  page.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  page.on('requestfailed', (r) => log.push(`[requestfailed] ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(`${BASE}/${query}`);
  return { page, log };
}

async function waitStatus(page, log, wanted) {
  try {
    await page.waitForFunction((w) => w.includes(document.body.dataset.status), wanted, { timeout: RUN_TIMEOUT_MS, polling: 200 });
  } catch (e) {
    throw new Error(`page status stayed '${await page.evaluate(() => document.body.dataset.status)}': ${e.message}\n${log.join('\n')}`);
  }
  return page.evaluate(() => document.body.dataset.status);
}

/** Loads the autorun page, waits for the run, returns the result JSON text and the page. */
async function autorun(backend) {
  const { page, log } = await openPage(`?example=default&autorun=1&backend=${backend}`);
  const status = await waitStatus(page, log, ['done', 'error']);
  if (status !== 'done') {
    const msg = await page.textContent('#error');
    throw new Error(`the page reports an error: ${msg}\n${log.join('\n')}`);
  }
  const json = await page.textContent('#results-json');
  return { page, log, json, result: JSON.parse(json) };
}

/** Waits (up to 30 s) until the text of `selector` matches `re`: files are read asynchronously. */
async function expectText(page, selector, re) {
  try {
    await page.waitForFunction(([sel, src, flags]) => new RegExp(src, flags).test(document.querySelector(sel)?.textContent ?? ''), [selector, re.source, re.flags], { timeout: 30_000, polling: 100 });
  } catch {
    assert.match(await page.textContent(selector), re);
  }
}

const bits = (x) => {
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, x);
  return v.getBigUint64(0).toString(16).padStart(16, '0');
};

function sameNumber(a, b, where) {
  if (a === null || b === null) {
    assert.equal(a, b, `${where}: ${a} vs ${b}`);
  } else {
    assert.equal(bits(a), bits(b), `${where}: browser ${a} vs native ${b}`);
  }
}

/** Every score and every local value of the rank-based measures, bit for bit. */
function assertSameScores(web, nat, label) {
  let scores = 0;
  let locals = 0;
  assert.deepEqual(web.result.projections.map((p) => p.name), nat.result.projections.map((p) => p.name), `${label}: projections`);
  web.result.projections.forEach((wp, p) => {
    const np = nat.result.projections[p];
    assert.deepEqual(wp.scores.map((s) => s.id), np.scores.map((s) => s.id), `${label}: measures of ${wp.name}`);
    wp.scores.forEach((ws, s) => {
      const ns = np.scores[s];
      const where = `${label}: ${wp.name}/${ws.id}`;
      assert.deepEqual(ws.params, ns.params, `${where} params`);
      assert.deepEqual(Object.keys(ws.values), Object.keys(ns.values), `${where} keys`);
      for (const key of Object.keys(ns.values)) {
        sameNumber(ws.values[key], ns.values[key], `${where}.${key}`);
        scores++;
      }
      if (RANK_BASED.has(ws.id)) {
        assert.ok(ws.local && ns.local, `${where}: local values missing (browser ${!!ws.local}, native ${!!ns.local})`);
        assert.deepEqual(Object.keys(ws.local), Object.keys(ns.local), `${where} local keys`);
        for (const key of Object.keys(ns.local)) {
          assert.equal(ws.local[key].length, ns.local[key].length, `${where}.${key} length`);
          ns.local[key].forEach((v, i) => sameNumber(ws.local[key][i], v, `${where}.${key}[${i}]`));
          locals += ns.local[key].length;
        }
      }
    });
  });
  // The printed text too: both sides print shortest round-trip numbers with serde_json.
  const part = (json) => json.slice(0, json.indexOf(',"run":'));
  assert.equal(part(web.json), part(nat.json), `${label}: the projections' JSON text differs from the CLI's`);
  console.log(`# ${label}: ${scores} scores and ${locals} local values bit-identical to the native CLI`);
}

test('the native CLI evaluates the default specs on the bundled example', () => {
  const ids = native.result.projections[0].scores.map((s) => s.id);
  assert.deepEqual(ids, ['tnc', 'mrre', 'lcmc', 'nh']);
  assert.equal(native.result.run.backend, 'cpu');
});

test('WebGPU: autorun on the bundled example equals the native CLI bit for bit', async (t) => {
  const { page: probe } = await openPage('');
  const adapter = await probe.evaluate(async () => {
    if (!('gpu' in navigator)) return null;
    const a = await navigator.gpu.requestAdapter();
    return a ? { vendor: a.info.vendor, architecture: a.info.architecture, fallback: a.info.isFallbackAdapter } : null;
  });
  await probe.close();
  if (!adapter) {
    const msg = `headless Chromium has no WebGPU adapter (flags: ${FLAGS.join(' ')})`;
    if (CI) assert.fail(`${msg}; under CI=true this is a failure`);
    console.warn(`# SKIP (loud): ${msg}`);
    t.skip(msg);
    return;
  }
  console.log(`# WebGPU adapter: ${JSON.stringify(adapter)}`);

  const web = await autorun('webgpu');
  const run = web.result.run;
  assert.equal(run.backend_requested, 'webgpu');
  assert.equal(run.fallback_reason, null, `the CPU served: ${run.fallback_reason}`);
  assert.equal(run.backend, 'gpu');
  assert.ok(run.adapter, 'no adapter in run');
  assert.equal(run.adapter.backend, 'BrowserWebGpu', `adapter backend ${run.adapter.backend}`);
  console.log(`# served by ${run.backend}: adapter ${JSON.stringify({ name: run.adapter.name, backend: run.adapter.backend, device_type: run.adapter.device_type })}; ` +
    `served ${run.served.map((s) => `${s.output}=${s.backend}`).join(', ')}; total ${run.timings.total_s.toFixed(3)} s`);
  assert.ok(run.served.some((s) => s.backend === 'gpu'), 'no output was served by the GPU');
  assertSameScores(web, native, 'webgpu');

  // The page itself: the backend chip, the scatterplot and the curve are drawn.
  assert.match(await web.page.textContent('#run-info'), /GPU \(WebGPU\)/);
  assert.equal(await web.page.evaluate(() => document.body.dataset.curve), 'done');
  const drawn = await web.page.evaluate(() => {
    const colours = (id) => {
      const c = document.getElementById(id);
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const set = new Set();
      for (let i = 0; i < d.length; i += 4 * 7) if (d[i + 3]) set.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
      return set.size;
    };
    return { scatter: colours('scatter'), curve: colours('curve') };
  });
  assert.ok(drawn.scatter > 20, `the scatterplot looks empty (${drawn.scatter} colours)`);
  assert.ok(drawn.curve > 5, `the curve looks empty (${drawn.curve} colours)`);

  mkdirSync(OUT, { recursive: true });
  const shot = path.join(OUT, 'web-screenshot.png');
  await web.page.screenshot({ path: shot, fullPage: true });
  const size = statSync(shot).size;
  assert.ok(size > 50_000, `screenshot ${shot} is only ${size} bytes`);
  console.log(`# screenshot: ${shot} (${size} bytes)`);
  await web.page.close();
});

test('CPU (wasm): autorun on the bundled example equals the native CLI bit for bit', async () => {
  const web = await autorun('cpu');
  const run = web.result.run;
  assert.equal(run.backend_requested, 'cpu');
  assert.equal(run.backend, 'cpu');
  assert.equal(run.adapter, null);
  assertSameScores(web, native, 'cpu');
  assert.match(await web.page.textContent('#run-info'), /CPU \(WebAssembly\)/);
  await web.page.close();
});

// Records, before the page's scripts run, every request posted to the worker and every text
// drawn on the "Across k" canvas (its axis labels and ticks).
function recordCurveCalls() {
  window.__posted = [];
  window.__curveTexts = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg && msg.op) window.__posted.push({ op: msg.op, specs: msg.request?.specs ?? null });
    return post.call(this, msg, ...rest);
  };
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    if (this.canvas?.id === 'curve') window.__curveTexts.push(String(text));
    return fillText.call(this, text, ...rest);
  };
}

test('Across k: one coranking evaluation, R_NX on a log-K axis, its AUC in the legend equal to the CLI', async () => {
  const { page, log } = await openPage('?example=default&autorun=1&backend=cpu', recordCurveCalls);
  const status = await waitStatus(page, log, ['done', 'error']);
  assert.equal(status, 'done', `${await page.textContent('#error')}\n${log.join('\n')}`);
  assert.equal(await page.inputValue('#curve-measure'), 'coranking', 'the curve defaults to the co-ranking family');
  await page.waitForFunction(() => ['done', 'error', 'cancelled'].includes(document.body.dataset.curve), null, { timeout: RUN_TIMEOUT_MS, polling: 200 });
  assert.equal(await page.evaluate(() => document.body.dataset.curve), 'done', await page.textContent('#curve-status'));

  // The chart came from a single evaluation with the single spec coranking:k_max=K (not one run per K).
  const posted = await page.evaluate(() => window.__posted);
  const evaluations = posted.filter((m) => m.op === 'evaluate');
  const curveRuns = evaluations.filter((m) => m.specs.some((s) => s.startsWith('coranking')));
  assert.equal(curveRuns.length, 1, `co-ranking evaluations: ${JSON.stringify(evaluations)}`);
  assert.equal(evaluations.length, 2, `the page run and the curve run only: ${JSON.stringify(evaluations)}`);
  const specs = curveRuns[0].specs;
  assert.equal(specs.length, 1, `one spec for every K: ${JSON.stringify(specs)}`);
  assert.match(specs[0], /^coranking:k_max=\d+$/);
  const kMax = Number(specs[0].split('=')[1]);
  assert.ok(kMax >= 50, `k_max ${kMax}: the page's default K range is 5 to 50`);

  // A log-K axis: its label and 1-2-5 ticks were drawn (a linear axis over 5..50 would tick 30 and 40).
  const texts = await page.evaluate(() => window.__curveTexts);
  const shown = JSON.stringify(texts.slice(0, 40));
  assert.ok(texts.includes('K (log scale)'), `x label not drawn: ${shown}`);
  for (const tick of ['10', '20', '50']) assert.ok(texts.includes(tick), `no log tick ${tick}: ${shown}`);
  for (const tick of ['30', '40']) assert.ok(!texts.includes(tick), `linear tick ${tick} drawn: ${shown}`);

  // The legend: per projection R_NX with its AUC (the CLI's value for the same spec), T and C.
  const nat = JSON.parse(execFileSync(CLI, ['measure', '--json', '--backend', 'cpu', '--spec', specs[0]], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const legend = await page.textContent('#curve-legend');
  for (const p of nat.projections) {
    const auc = p.scores[0].values.auc_rnx;
    assert.ok(auc > 0 && auc < 1, `${p.name}: AUC ${auc}`);
    assert.ok(legend.includes(`${p.name} · R_NX (AUC ${auc.toFixed(4)}, K ≤ ${kMax})`), `${p.name}: AUC ${auc.toFixed(4)} not in the legend: ${legend}`);
    assert.ok(legend.includes(`${p.name} · trustworthiness`) && legend.includes(`${p.name} · continuity`), `${p.name}: T or C missing: ${legend}`);
  }
  mkdirSync(OUT, { recursive: true });
  const shot = path.join(OUT, 'web-across-k.png');
  await page.locator('#curve-card').screenshot({ path: shot });
  assert.ok(statSync(shot).size > 10_000, `screenshot ${shot} is only ${statSync(shot).size} bytes`);
  console.log(`# Across k: ${specs[0]} in one evaluation; legend: ${legend}; screenshot ${shot}`);
  await page.close();
});

test('the picker lists the measures beyond ZADU, and the colour legend follows each local kind', async () => {
  const { page, log } = await openPage('?example=default&autorun=1&backend=cpu');
  assert.equal(await waitStatus(page, log, ['done', 'error']), 'done', log.join('\n'));
  // The new measures are in the picker, grouped with the distance measures; cca_stress's
  // lambda has no default and must be filled in.
  for (const id of ['sammon', 'cca_stress', 'residual_variance', 'nerv', 'knn_overlap', 'ale', 'density_preservation', 'triplet_accuracy', 'global_score']) {
    assert.equal(await page.locator(`#m-${id}`).count(), 1, `${id} is in the measure picker`);
  }
  assert.equal(await page.getAttribute('input[name="p-cca_stress-lambda"]', 'placeholder'), 'required');
  // Issue 27's groups: the scagnostics under "Scatterplot diagnostics", gce under "Class separation".
  const group = (title) => page.locator('details.mgroup').filter({ has: page.locator('summary', { hasText: title }) });
  assert.equal(await group('Scatterplot diagnostics').locator('#m-scagnostics').count(), 1, 'scagnostics is under Scatterplot diagnostics');
  assert.equal(await group('Class separation').locator('#m-gce').count(), 1, 'gce is under Class separation');
  // Evaluate Sammon (a sum per point) and kNN overlap (means and counts) with local values.
  await page.locator('#measure-list input[type=checkbox]').evaluateAll((bs) => bs.forEach((b) => { b.checked = false; }));
  await page.locator('details.mgroup').evaluateAll((ds) => ds.forEach((d) => { d.open = true; }));
  await page.check('#m-sammon');
  await page.check('#m-knn_overlap');
  await page.check('#local');
  await page.click('#run');
  assert.equal(await waitStatus(page, log, ['done', 'error']), 'done', `${await page.textContent('#error')}\n${log.join('\n')}`);
  const result = JSON.parse(await page.textContent('#results-json'));
  const sammon = result.projections[0].scores.find((s) => s.id === 'sammon');
  assert.deepEqual(sammon.local_kinds, { local_sammon_stress: 'sum' });
  // The same bits as the native CLI.
  const nat = JSON.parse(execFileSync(CLI, ['measure', '--json', '--local', '--backend', 'cpu', '--spec', 'sammon'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  assert.equal(sammon.values.sammon_stress, nat.projections[0].scores[0].values.sammon_stress);
  const options = await page.locator('#scatter-colour option').evaluateAll((os) => os.map((o) => o.value));
  const pick = async (key) => {
    await page.selectOption('#scatter-colour', options.find((v) => v.endsWith(`:${key}`)));
    return page.textContent('#legend');
  };
  const sum = await pick('local_sammon_stress');
  assert.match(sum, /sum/);
  assert.match(sum, /part of the total/, `a sum is drawn as parts of a total, not on a 0–1 scale: ${sum}`);
  assert.match(sum, /^local_sammon_stresssum0/, `a sum's scale starts at 0: ${sum}`);
  const count = await pick('false_neighbours');
  assert.match(count, /count/);
  assert.match(count, /total \d+/, count);
  const mean = await pick('local_knn_overlap');
  assert.match(mean, /mean/);
  mkdirSync(OUT, { recursive: true });
  const shot = path.join(OUT, 'web-local-kinds.png');
  await pick('local_sammon_stress');
  await page.locator('#scatter').screenshot({ path: shot });
  console.log(`# local kinds: legends ${JSON.stringify([sum, count, mean])}; screenshot ${shot}`);
  await page.close();
});

test('bad files get clear messages', async () => {
  const { page, log } = await openPage('?backend=cpu');
  await waitStatus(page, log, ['ready']);
  const csv = (rows, cols, f) => Buffer.from(Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => f(r, c)).join(',')).join('\n') + '\n');
  const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
  const run = async () => {
    await page.click('#run');
    await waitStatus(page, log, ['done', 'error']);
    return { status: await page.evaluate(() => document.body.dataset.status), error: await page.textContent('#error') };
  };

  // Not a .npy file: caught while reading, next to the inputs.
  await page.setInputFiles('#file-high', file('broken.npy', Buffer.from('definitely not numpy')));
  await expectText(page, '#data-msg', /broken\.npy: not a \.npy file/);

  // A NaN in the original data: the wasm validation names the file, row and column.
  await page.setInputFiles('#file-high', file('high.csv', csv(60, 3, (r, c) => (r === 7 && c === 1 ? 'nan' : Math.sin(r * 3 + c)))));
  await page.setInputFiles('#file-lows', file('low.csv', csv(60, 2, (r, c) => Math.cos(r + 5 * c))));
  let r = await run();
  assert.equal(r.status, 'error');
  assert.match(r.error, /high\.csv: non-finite value NaN at row 7, column 1/);

  // Mismatched rows.
  await page.setInputFiles('#file-high', file('high.csv', csv(60, 3, (r, c) => Math.sin(r * 3 + c))));
  await page.setInputFiles('#file-lows', file('short.csv', csv(50, 2, (r, c) => Math.cos(r + 5 * c))));
  await expectText(page, '#info-lows', /≠ 60 rows/);
  r = await run();
  assert.equal(r.status, 'error');
  assert.match(r.error, /short\.csv: has 50 rows but the original space has 60/);

  // A 3-D .npy array.
  const header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }";
  const pad = 64 - ((10 + header.length + 1) % 64);
  const npy = Buffer.concat([Buffer.from([0x93]), Buffer.from('NUMPY'), Buffer.from([1, 0]), Buffer.from(Uint16Array.of(header.length + pad + 1).buffer),
    Buffer.from(header + ' '.repeat(pad) + '\n'), Buffer.alloc(64)]);
  await page.setInputFiles('#file-high', file('cube.npy', npy));
  await expectText(page, '#data-msg', /cube\.npy: expected a 2-D array \(rows × columns\), got shape \(2, 2, 2\)/);

  // And a good pair runs (the CPU served; removing short.csv leaves low.csv).
  await page.setInputFiles('#file-high', file('high.csv', csv(60, 3, (r, c) => Math.sin(r * 3 + c))));
  await page.click('#info-lows button[data-index="1"]');
  r = await run();
  assert.equal(r.status, 'done', r.error);
  const result = JSON.parse(await page.textContent('#results-json'));
  assert.deepEqual(result.projections.map((p) => p.name), ['low.csv']);
  await page.close();
});

test('Cancel stops a long run, and a fresh worker serves the next one', async () => {
  const { page, log } = await openPage('?example=default&backend=cpu');
  await waitStatus(page, log, ['ready']);
  // Seconds of work on the wasm CPU: 8 million CADI triplets on the 1797 digits.
  const extraSpecs = (v) => page.$eval('#extra-specs', (el, text) => { el.value = text; }, v); // inside a closed <details>
  await extraSpecs('cadi:n_triplets=8000000');
  await page.click('#run');
  assert.equal(await waitStatus(page, log, ['running', 'done', 'error']), 'running');
  await page.waitForSelector('#cancel:not([hidden])', { timeout: 10_000 });
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'running', 'the run ended before Cancel: make it longer');
  const t0 = Date.now();
  await page.click('#cancel');
  assert.equal(await waitStatus(page, log, ['cancelled', 'done', 'error']), 'cancelled');
  assert.ok(Date.now() - t0 < 5000, `Cancel took ${Date.now() - t0} ms`);
  assert.match(await page.textContent('#run-status'), /Cancelled/);
  assert.ok(await page.isHidden('#error'), 'a cancelled run is not an error');
  assert.ok(await page.isHidden('#cancel'), 'Cancel hides when nothing runs');
  await extraSpecs('');
  await page.click('#run');
  assert.equal(await waitStatus(page, log, ['done', 'error']), 'done', await page.textContent('#error'));
  await page.close();
});

test('benchmark tab: the kernel suite on WebGPU and the wasm CPU, receipt in the native format', async (t) => {
  const { page, log } = await openPage('?bench=1&autorun=1&sizes=300&repeat=2');
  const status = await waitStatus(page, log, ['done', 'error']);
  if (status !== 'done') {
    const msg = await page.textContent('#bench-error');
    throw new Error(`the benchmark reports an error: ${msg}\n${log.join('\n')}`);
  }
  const receipt = JSON.parse(await page.textContent('#bench-json'));
  const gpuRows = receipt.rows.filter((r) => r.backend === 'gpu');
  if (!gpuRows.length && !CI) {
    console.warn('# SKIP (loud): no WebGPU adapter, the benchmark ran on the CPU only');
    t.skip('no WebGPU');
    await page.close();
    return;
  }

  // The same keys as the native receipt (a one-kernel CPU run of `faithful bench`).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'faithful-bench-'));
  const nativePath = path.join(dir, 'native.json');
  execFileSync(CLI, ['bench', '--sizes', '30', '--dims', '3', '--k', '5', '--repeat', '1', '--kernels', 'knn', '--backend', 'cpu', '--json', nativePath], { encoding: 'utf8' });
  const nat = JSON.parse(readFileSync(nativePath, 'utf8'));
  const keys = (o) => Object.keys(o).sort();
  assert.deepEqual(keys(receipt), keys(nat), 'receipt keys');
  assert.deepEqual(keys(receipt.machine), keys(nat.machine), 'machine keys');
  assert.deepEqual(keys(receipt.settings), keys(nat.settings), 'settings keys');
  assert.deepEqual(keys(receipt.rows[0]), keys(nat.rows[0]), 'row keys');
  assert.equal(receipt.schema, nat.schema);
  assert.match(receipt.machine.os, /^browser/);
  assert.equal(receipt.adapters.length, 1, 'one WebGPU adapter');
  assert.equal(receipt.adapters[0].backend, 'BrowserWebGpu');

  const kernels = ['distances', 'knn', 'ranks', 'pairs', 'evaluation'];
  for (const backend of ['cpu', 'gpu']) {
    const rows = receipt.rows.filter((r) => r.backend === backend);
    assert.deepEqual(rows.map((r) => r.kernel), kernels, `${backend} rows`);
    for (const r of rows) {
      assert.equal(r.n, 300);
      assert.equal(r.d, 20);
      assert.equal(r.k, 20);
      assert.ok(typeof r.adapter === 'string' && r.adapter.length > 0, `${backend} ${r.kernel}: adapter`);
      assert.ok(Number.isFinite(r.cold_s) && r.cold_s >= 0, `${backend} ${r.kernel}: cold_s ${r.cold_s}`);
      assert.ok(Number.isFinite(r.warm_s) && r.warm_s >= 0, `${backend} ${r.kernel}: warm_s ${r.warm_s}`);
      assert.equal(r.warm_runs_s.length, 2);
      assert.equal(r.parity, backend === 'cpu' ? 'reference' : 'identical', `${backend} ${r.kernel}: parity ${r.parity} ${r.error ?? ''}`);
    }
  }
  for (const r of gpuRows) assert.equal(r.api, 'BrowserWebGpu', `${r.kernel}: api ${r.api}`);
  assert.ok(gpuRows.some((r) => r.device_start_s !== null), 'no cold GPU run recorded its device start');
  const table = await page.textContent('#bench-table');
  assert.match(table, /identical/);
  assert.equal(await page.isEnabled('#bench-download'), true);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, 'web-bench-screenshot.png'), fullPage: true });
  console.log('# bench: ' + receipt.rows.map((r) => `${r.backend}/${r.kernel} cold ${r.cold_s.toFixed(3)} s warm ${r.warm_s.toFixed(3)} s ${r.parity}`).join('; '));
  await page.close();
});

test('Live tab: umap-js optimises the example and a resident Session scores it every 5 epochs', async () => {
  const { page, log } = await openPage('?live=1&autorun=1&epochs=30&every=5&backend=cpu&workers=1&keepup=0');
  const status = await waitStatus(page, log, ['done', 'error']);
  assert.equal(status, 'done', `the Live tab reports: ${await page.textContent('#live-error')}\n${log.join('\n')}`);
  const records = JSON.parse(await page.textContent('#live-json'));
  assert.deepEqual(records.map((r) => r.epoch), [5, 10, 15, 20, 25, 30]);
  for (const r of records) {
    assert.equal(r.backend, 'cpu');
    assert.equal(r.workers, 1);
    for (const key of ['trustworthiness', 'continuity']) assert.ok(r[key] > 0 && r[key] <= 1, `epoch ${r.epoch}: ${key} ${r[key]}`);
    assert.ok(r.ms > 0);
  }
  // UMAP improves the embedding: the last scores beat the first.
  assert.ok(records.at(-1).trustworthiness > records[0].trustworthiness, JSON.stringify(records));
  assert.match(await page.textContent('#live-info'), /epoch 30\/30 · served by CPU \(wasm\) on 1 worker · [\d.]+ evaluations\/s/);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, 'web-live.png'), fullPage: true });
  await page.close();
});

test('Live tab on the worker pool: keeping up, every score the pool returns is the one-worker score of its epoch', async () => {
  const { page, log } = await openPage('?live=1&autorun=1&epochs=30&every=1&backend=cpu&workers=2&keepup=1');
  const status = await waitStatus(page, log, ['done', 'error']);
  assert.equal(status, 'done', `the Live tab reports: ${await page.textContent('#live-error')}\n${log.join('\n')}`);
  const records = JSON.parse(await page.textContent('#live-json'));
  assert.ok(records.length >= 2, JSON.stringify(records));
  // Epochs rise, the last one is scored, and the pool served.
  assert.ok(records.every((r, i) => i === 0 || r.epoch > records[i - 1].epoch), JSON.stringify(records.map((r) => r.epoch)));
  assert.equal(records.at(-1).epoch, 30);
  assert.ok(records.every((r) => r.workers === 2 && r.backend === 'cpu'));
  // The same UMAP run (seeded) scored every 5 epochs on one worker, above, gives epoch 30's
  // scores: the pool's are the same bits.
  const one = await openPage('?live=1&autorun=1&epochs=30&every=30&backend=cpu&workers=1&keepup=0');
  assert.equal(await waitStatus(one.page, one.log, ['done', 'error']), 'done');
  const single = JSON.parse(await one.page.textContent('#live-json'));
  assert.equal(single.at(-1).epoch, 30);
  assert.equal(records.at(-1).trustworthiness, single.at(-1).trustworthiness);
  assert.equal(records.at(-1).continuity, single.at(-1).continuity);
  assert.match(await page.textContent('#live-info'), /served by CPU \(wasm\) on 2 workers/);
  await one.page.close();
  await page.close();
});
