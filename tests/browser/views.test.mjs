// The distortion views in headless Chromium (run by scripts/test_browser.sh, after the wasm
// package and the native CLI are built): every ?view= of the page on the bundled example, on
// WebGPU (SwiftShader) and on the wasm CPU, and a `faithful report` opened from a file:// URL.
//
//   FAITHFUL_URL  the served page;  FAITHFUL_CLI  the native CLI;  FAITHFUL_OUT  screenshots go
//   to $FAITHFUL_OUT/views/ (docs/views/ holds the committed ones);  CHROMIUM  the browser.
//
// What must hold: <body data-status> becomes "done"; #view-json's numbers equal the native
// CLI's: the lens's missing and false neighbours are the set differences of `faithful knn`'s
// lists, and their ranks give back `faithful measure --local`'s local T and C bit for bit; the
// Shepard bins hold n(n−1)/2 pairs and equal `faithful views --json`'s counts; CheckViz's
// colours are the scale's colours of `measure --local`'s values, and so are the drawn pixels.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from './flags.mjs';

const BASE = process.env.FAITHFUL_URL;
const CLI = process.env.FAITHFUL_CLI;
const OUT = path.join(process.env.FAITHFUL_OUT ?? 'out', 'views');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CI = ['true', '1'].includes(String(process.env.CI).toLowerCase());
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const TIMEOUT_MS = 10 * 60 * 1000;
const K = 10;

let browser;
let dir;
let ex; // the example as the page sees it: {high, lows, labels}
const cli = (args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 30 });

/** A float64 C-order .npy of an n × d matrix. */
function npy(file, data, rows, cols) {
  let header = `{'descr': '<f8', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(Float64Array.from(data).buffer)]));
  return file;
}

before(async () => {
  assert.ok(BASE && CLI, 'FAITHFUL_URL and FAITHFUL_CLI must be set (run scripts/test_browser.sh)');
  mkdirSync(OUT, { recursive: true });
  dir = mkdtempSync(path.join(os.tmpdir(), 'faithful-views-'));
  // The bundled example, from the package the page runs (Node's wasm CPU), as files for the CLI.
  const pkg = await import(pathToFileURL(path.join(ROOT, 'web/pkg/faithful.js')).href);
  await pkg.default({ module_or_path: readFileSync(path.join(ROOT, 'web/pkg/faithful_bg.wasm')) });
  const e = pkg.exampleData();
  ex = {
    high: npy(path.join(dir, 'digits.npy'), e.high.data, e.high.rows, e.high.cols),
    lows: e.lows.map((l) => ({ name: l.name, file: npy(path.join(dir, `${l.name}.npy`), l.data, l.rows, l.cols) })),
    n: e.high.rows,
  };
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
});

async function view(query) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const log = [];
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && log.push(`[console.error] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  await page.goto(query.startsWith('file:') ? query : `${BASE}/${query}`);
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.status), null, { timeout: TIMEOUT_MS, polling: 250 });
  const status = await page.evaluate(() => document.body.dataset.status);
  const err = await page.evaluate(() => (document.getElementById('views-error') ?? document.getElementById('fr-error'))?.textContent ?? '');
  assert.equal(status, 'done', `${query}: ${err}\n${log.join('\n')}`);
  assert.deepEqual(log, [], `${query}: errors in the page`);
  return { page, requests, json: JSON.parse(await page.textContent('#view-json')) };
}

async function adapterOrSkip(t, backend) {
  if (backend !== 'webgpu') return true;
  const page = await browser.newPage();
  await page.goto(`${BASE}/`);
  const ok = await page.evaluate(async () => !!(navigator.gpu && (await navigator.gpu.requestAdapter())));
  await page.close();
  if (!ok) {
    if (CI) assert.fail('no WebGPU adapter in headless Chromium (CI=true)');
    t.skip('no WebGPU adapter');
  }
  return ok;
}

/** tnc's local value from integer excess ranks, as the library computes it. */
const localTnc = (ranks, k, n) => 1 - ranks.reduce((s, r) => s + (r > k ? r - k : 0), 0) * (2 / (k * (2 * n - 3 * k - 1)));

/** CheckViz's colour, written out again from the scale's definition (web/views/colour.js). */
function checkviz(t, c, lo) {
  const corners = [[247, 247, 247], [230, 97, 1], [94, 60, 153], [30, 30, 30]];
  const u = Math.min(1, Math.max(0, (1 - t) / (1 - lo)));
  const v = Math.min(1, Math.max(0, (1 - c) / (1 - lo)));
  const w = [(1 - u) * (1 - v), u * (1 - v), (1 - u) * v, u * v];
  return [0, 1, 2].map((ch) => Math.floor(corners.reduce((s, col, i) => s + col[ch] * w[i], 0) + 0.5));
}

let shots = 0;
async function shoot(page, name) {
  const card = await page.$('.fv-card');
  await card.screenshot({ path: path.join(OUT, `${name}.png`), timeout: 120_000 });
  shots++;
}

for (const backend of ['cpu', 'webgpu']) {
  test(`lens (${backend}): missing and false neighbours are faithful knn's, their ranks give measure --local's T and C`, async (t) => {
    if (!(await adapterOrSkip(t, backend))) return;
    const { page, json } = await view(`?view=lens&autorun=1&backend=${backend}&k=${K}`);
    const { n } = ex;
    assert.equal(json.view, 'lens');
    assert.equal(json.k, K);
    const i = json.point;
    const knnJson = (file) => JSON.parse(cli(['knn', '--data', file, '--k', String(K), '--json'])).indices[i];
    const high = knnJson(ex.high);
    const low = knnJson(ex.lows[0].file);
    assert.deepEqual(json.missing, high.filter((j) => !low.includes(j)), 'missing = original neighbours not among the projection\'s');
    assert.deepEqual(json.false, low.filter((j) => !high.includes(j)), 'false = projection neighbours not among the original\'s');
    const m = JSON.parse(cli(['measure', '--high', ex.high, '--low', ex.lows[0].file, '--spec', `tnc:k=${K}`, '--local', '--json', '--backend', 'cpu']));
    const local = m.projections[0].scores[0].local;
    assert.equal(localTnc(json.false_ranks, K, n), local.local_trustworthiness[i], 'T from the false neighbours\' original ranks');
    assert.equal(localTnc(json.missing_ranks, K, n), local.local_continuity[i], 'C from the missing neighbours\' projection ranks');
    assert.ok(json.missing_ranks.every((r) => r > K) && json.false_ranks.every((r) => r > K));
    // The page picked the worst point: the smallest local T + C.
    const sums = local.local_trustworthiness.map((v, j) => v + local.local_continuity[j]);
    assert.equal(i, sums.indexOf(Math.min(...sums)));
    // Every point brushed: the selection's T & C are the scores'.
    assert.equal(json.selection.count, n);
    const score = m.projections[0].scores[0].values;
    assert.ok(Math.abs(json.selection.trustworthiness - score.trustworthiness) < 1e-12, `${json.selection.trustworthiness} vs ${score.trustworthiness}`);
    assert.ok(Math.abs(json.selection.continuity - score.continuity) < 1e-12);
    if (backend === 'cpu') await shoot(page, 'lens');
    await page.close();
  });

  test(`shepard (${backend}): the bins hold n(n−1)/2 pairs, faithful views' counts`, async (t) => {
    if (!(await adapterOrSkip(t, backend))) return;
    const { page, json } = await view(`?view=shepard&autorun=1&backend=${backend}`);
    const n = ex.n;
    assert.equal(json.pairs, (n * (n - 1)) / 2);
    assert.equal(json.reported_pairs, json.pairs);
    const native = JSON.parse(cli(['views', '--k', '0', '--coranking-per-octave', '0', '--spec', 'stress', '--spec', 'srho', '--json', '--backend', 'cpu']));
    const nv = native.projections[0];
    assert.equal(json.largest_bin, Math.max(...nv.views.shepard.counts));
    assert.equal(json.nonempty_bins, nv.views.shepard.counts.filter((c) => c > 0).length);
    assert.equal(json.max_high, nv.views.shepard.max_high);
    assert.equal(json.max_low, nv.views.shepard.max_low);
    assert.equal(json.stress, nv.scores[0].values.stress);
    assert.equal(json.srho, nv.scores[1].values.spearman_rho);
    if (backend === 'cpu') await shoot(page, 'shepard');
    await page.close();
  });

  test(`checkviz (${backend}): every point's colour, and the pixel at it, come from measure --local's values`, async (t) => {
    if (!(await adapterOrSkip(t, backend))) return;
    const { page, json } = await view(`?view=checkviz&autorun=1&backend=${backend}&k=${K}`);
    assert.equal(json.points, ex.n);
    const m = JSON.parse(cli(['measure', '--high', ex.high, '--low', ex.lows[0].file, '--spec', `tnc:k=${K}`, '--local', '--json', '--backend', 'cpu']));
    const local = m.projections[0].scores[0].local;
    const lo = Math.min(...local.local_trustworthiness, ...local.local_continuity);
    assert.equal(json.scale_low, lo);
    assert.ok(json.samples.length >= 8, 'sampled points');
    for (const s of json.samples) {
      assert.equal(s.local_trustworthiness, local.local_trustworthiness[s.point]);
      assert.equal(s.local_continuity, local.local_continuity[s.point]);
      const want = checkviz(s.local_trustworthiness, s.local_continuity, lo);
      assert.deepEqual(s.rgb, want, `point ${s.point}`);
      assert.deepEqual(s.pixel, want, `the pixel at point ${s.point}`);
    }
    if (backend === 'cpu') await shoot(page, 'checkviz');
    await page.close();
  });

  test(`reliability, coranking, compare (${backend}): drawn from the library's lists and tallies`, async (t) => {
    if (!(await adapterOrSkip(t, backend))) return;
    const n = ex.n;
    const native = JSON.parse(cli(['views', '--k', String(K), '--json', '--backend', 'cpu']));
    const nv = native.projections[0].views;
    const rel = await view(`?view=reliability&autorun=1&backend=${backend}&k=${K}`);
    assert.equal(rel.json.edges, n * K);
    assert.equal(rel.json.torn_edges, nv.neighbourhoods.rank_low_of_high.filter((r) => r > K).length);
    const worst = rel.json.worst[0];
    assert.equal(worst.projection_rank, Math.max(...nv.neighbourhoods.rank_low_of_high));
    const slot = native.knn_high.slice(worst.point * K, (worst.point + 1) * K).indexOf(worst.neighbour);
    assert.ok(slot >= 0, 'the worst edge is an original kNN edge');
    assert.equal(nv.neighbourhoods.rank_low_of_high[worst.point * K + slot], worst.projection_rank);
    if (backend === 'cpu') await shoot(rel.page, 'reliability');
    await rel.page.close();
    const co = await view(`?view=coranking&autorun=1&backend=${backend}&k=${K}`);
    assert.equal(co.json.total, n * (n - 1));
    assert.equal(co.json.bins, nv.coranking.edges.length - 1);
    assert.equal(co.json.auc_rnx, nv.coranking.auc_rnx);
    assert.equal(co.json.rnx_at_k, nv.coranking.rnx[K - 1]);
    if (backend === 'cpu') await shoot(co.page, 'coranking');
    await co.page.close();
    const cmp = await view(`?view=compare&autorun=1&backend=${backend}&k=${K}`);
    assert.deepEqual(cmp.json.projections, native.projections.map((p) => p.name));
    const i = cmp.json.linked.point;
    native.projections.forEach((p, s) => {
      const high = native.knn_high.slice(i * K, (i + 1) * K);
      const low = p.views.neighbourhoods.knn_low.slice(i * K, (i + 1) * K);
      assert.deepEqual(cmp.json.linked.missing[s], high.filter((j) => !low.includes(j)), `${p.name}: linked missing`);
    });
    assert.equal(cmp.json.selection.length, 2);
    assert.ok(cmp.json.selection.every((s) => s.count === n));
    if (backend === 'cpu') await shoot(cmp.page, 'compare');
    await cmp.page.close();
  });
}

test('a faithful report opens from file:// and draws every view', async () => {
  const file = path.join(dir, 'report.html');
  execFileSync(CLI, ['report', '--out', file, '--backend', 'cpu'], { encoding: 'utf8' });
  const bytes = statSync(file).size;
  assert.ok(bytes < 2_000_000, `the example's report is ${bytes} bytes`);
  const { page, json, requests } = await view(pathToFileURL(file).href);
  const n = ex.n;
  // Nothing but the file itself was requested: no network, no other file.
  assert.deepEqual(requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:')), [pathToFileURL(file).href]);
  assert.equal(json.n, n);
  assert.deepEqual(json.left_out, []);
  assert.deepEqual(json.views.map((v) => v.view), ['checkviz', 'reliability', 'lens', 'shepard', 'coranking', 'compare']);
  const byView = Object.fromEntries(json.views.map((v) => [v.view, v]));
  assert.equal(byView.shepard.pairs, (n * (n - 1)) / 2);
  assert.equal(byView.coranking.total, n * (n - 1));
  const native = JSON.parse(cli(['views', '--k', String(K), '--json', '--backend', 'cpu']));
  const high = native.knn_high.slice(byView.lens.point * K, (byView.lens.point + 1) * K);
  const low = native.projections[0].views.neighbourhoods.knn_low.slice(byView.lens.point * K, (byView.lens.point + 1) * K);
  assert.deepEqual(byView.lens.missing, high.filter((j) => !low.includes(j)));
  await page.screenshot({ path: path.join(OUT, 'report.png'), fullPage: false, timeout: 120_000 });
  await page.close();
});

test('a report that leaves the kNN lists out still draws every view it holds', async () => {
  // The example's full report is about 620 kB; under 500 kB the lists and cross ranks stay out,
  // as they do at n = 100 000 under the 30 MB default (the compare view then links points
  // without a lens).
  const file = path.join(dir, 'report_without_lists.html');
  execFileSync(CLI, ['report', '--out', file, '--backend', 'cpu', '--max-size', '500K'], { encoding: 'utf8' });
  const { page, json } = await view(pathToFileURL(file).href);
  assert.equal(json.n, ex.n);
  assert.ok(json.left_out.some((s) => s.startsWith('the kNN lists and cross ranks')), JSON.stringify(json.left_out));
  const kinds = json.views.map((v) => v.view);
  assert.ok(kinds.includes('checkviz') && kinds.includes('compare'), kinds.join());
  assert.ok(!kinds.includes('lens') && !kinds.includes('reliability'), kinds.join());
  const cmp = json.views.find((v) => v.view === 'compare');
  assert.equal(cmp.linked.lens, 'no kNN lists and cross ranks');
  assert.equal(cmp.linked.missing, undefined);
  await page.close();
});

// A constant projection has no Spearman's ρ: the report and the views page leave the caption's
// srho out of that projection only and say why (stress stays; another projection keeps its
// srho), and every view they hold still draws without an error.
const N_FLAT = 60;
const wiggle = (t) => Math.abs(Math.sin(t * 12.9898) * 43758.5453) % 1;

test('a report on a constant projection leaves srho out, says why, and draws its views', async () => {
  const high = npy(path.join(dir, 'flat_high.npy'), Array.from({ length: N_FLAT * 3 }, (_, t) => wiggle(t)), N_FLAT, 3);
  const low = npy(path.join(dir, 'flat.npy'), new Array(N_FLAT * 2).fill(1.5), N_FLAT, 2);
  const spread = npy(path.join(dir, 'spread.npy'), Array.from({ length: N_FLAT * 2 }, (_, t) => wiggle(t + 7)), N_FLAT, 2);
  const file = path.join(dir, 'report_flat.html');
  execFileSync(CLI, ['report', '--high', high, '--low', low, '--low', spread, '--out', file, '--backend', 'cpu', '--k', '5'], { encoding: 'utf8' });
  const { page, json } = await view(pathToFileURL(file).href);
  const why = json.left_out.filter((s) => s.startsWith('srho (the Shepard caption)'));
  assert.equal(why.length, 1, JSON.stringify(json.left_out));
  assert.ok(why[0].includes('flat.npy') && why[0].includes('constant'), why[0]);
  // The scores table: spearman_rho for spread, "—" for flat, matched by measure, not position.
  const table = await page.evaluate(() => Array.from(document.querySelectorAll('#fr-scores tr')).map((tr) => Array.from(tr.children, (td) => td.textContent)));
  const row = (key) => table.find((r) => r[0] === key && r.length > 1);
  assert.equal(row('spearman_rho')?.[1], '—', JSON.stringify(table));
  assert.ok(Number.isFinite(Number(row('spearman_rho')[2])), JSON.stringify(row('spearman_rho')));
  assert.ok(Number.isFinite(Number(row('stress')?.[1])) && Number.isFinite(Number(row('stress')[2])), JSON.stringify(row('stress')));
  const shepard = json.views.find((v) => v.view === 'shepard');
  assert.ok(shepard, json.views.map((v) => v.view).join());
  assert.equal(shepard.srho ?? null, null);
  assert.ok(Number.isFinite(shepard.stress), `stress ${shepard.stress}`);
  await page.close();
});

test('the views page on a constant projection leaves srho out and says why', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const log = [];
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  await page.goto(`${BASE}/?view=shepard&backend=cpu`);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: TIMEOUT_MS, polling: 250 });
  await page.evaluate(({ n, seeds }) => {
    const high = Float64Array.from(seeds);
    window.faithfulPageData = () => ({
      high: { name: 'flat_high', rows: n, cols: 3, data: high },
      // A name with ':' in it, as the page's own labels hold.
      lows: [
        { name: 'flat: umap 2d', rows: n, cols: 2, data: new Float64Array(n * 2).fill(1.5) },
        { name: 'spread', rows: n, cols: 2, data: high.filter((_, t) => t % 3 !== 2) },
      ],
      labels: null,
    });
    document.getElementById('views-source').value = 'page';
    document.getElementById('views-run').click();
  }, { n: N_FLAT, seeds: Array.from({ length: N_FLAT * 3 }, (_, t) => wiggle(t)) });
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.status), null, { timeout: TIMEOUT_MS, polling: 250 });
  const err = await page.evaluate(() => document.getElementById('views-error')?.textContent ?? '');
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'done', err);
  assert.deepEqual(log, []);
  const json = JSON.parse(await page.textContent('#view-json'));
  assert.equal(json.srho ?? null, null);
  assert.ok(Number.isFinite(json.stress), `stress ${json.stress}`);
  const status = await page.textContent('#views-status');
  assert.ok(status.includes('left out: srho (the Shepard caption): undefined on flat: umap 2d because') && status.includes('constant'), status);
  assert.ok(!status.includes('undefined on spread'), status);
  await page.close();
});

test('screenshots were taken', () => {
  assert.ok(shots >= 6 || !CI, `${shots} view screenshots`);
});
