// Benchmark of the npm package's resident Session against a cold evaluate() in headless Chromium:
// on WebGPU (Dawn on SwiftShader, Chromium's software Vulkan: a CPU rasteriser, so this measures
// portability and exactness, not GPU speed) and on the wasm CPU in the page. Every score is
// compared with the Node wasm CPU's on the same inputs (the reference; a mismatch exits 1).
// Prints the receipt JSON (docs/bench/npm_session_swiftshader_*.json); progress on stderr.
//
//   node benches/npm_session_browser.mjs PACKAGE_DIR [--sizes 2000,5000] [--backends webgpu,cpu]
//        [--repeat 3] [--max-call-s 60]
//
// PACKAGE_DIR: an unpacked faithful-dr (scripts/npm_pack.sh DIR, then `tar xzf`, its package/).
// Needs tests/browser's node_modules (playwright-core; scripts/test_browser.sh installs them) and
// Debian's Chromium ($CHROMIUM). Data, spec and seeds as benches/npm_session.mjs
// (benches/npm_session_data.mjs). Per backend the sizes run in order; a larger n runs only if
// the median call at the smaller one took under --max-call-s seconds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../tests/browser/flags.mjs';
import { serveStatic } from '../tests/browser/static_server.mjs';
import { nodePackage, opt, packageDir } from './npm_session_args.mjs';
import { SPEC, blobs, median, projection } from './npm_session_data.mjs';

const sizes = opt('sizes', '2000,5000').split(',').map(Number);
const backends = opt('backends', 'webgpu,cpu').split(',');
const repeat = Number(opt('repeat', '3'));
const maxCallS = Number(opt('max-call-s', '60'));
const say = (m) => process.stderr.write(`npm_session_browser: ${m}\n`);

// The seeds of every call, as benches/npm_session.mjs: cold 100 + i, first 1, warm 200 + i.
const seeds = { cold: Array.from({ length: repeat }, (_, i) => 100 + i), first: 1, warm: Array.from({ length: repeat }, (_, i) => 200 + i) };

/** Runs in the page: times one backend at one n; returns seconds, scores and what served. */
async function inPage({ n, backend, seeds, spec }) {
  const { default: init, Session, evaluate } = await import('/faithful-dr/faithful.js');
  const { blobs, projection, time } = await import('/npm_session_data.mjs');
  await init();
  const high = blobs(n, 50, n);
  const served = (r) => ({ backend: r.run.backend, fallback_reason: r.run.fallback_reason, adapter: r.run.adapter && `${r.run.adapter.name} (${r.run.adapter.backend}, ${r.run.adapter.device_type}, ${r.run.adapter.driver})` });
  const call = async (f) => {
    let r;
    const s = await time(async () => (r = await f()));
    return { s, scores: r.projections[0].scores, served: served(r), knn_high_reused: r.run.plan.knn_high_reused, high_ranks: r.run.plan.high_ranks?.source ?? null };
  };
  const cold = [];
  for (const seed of seeds.cold) cold.push(await call(() => evaluate({ high, lows: [projection(high, seed)], specs: spec, backend })));
  let session;
  const create_s = await time(async () => (session = await Session.create({ high, backend })));
  const first = await call(() => session.measure({ low: projection(high, seeds.first), specs: spec }));
  const warm = [];
  for (const seed of seeds.warm) warm.push(await call(() => session.measure({ low: projection(high, seed), specs: spec })));
  // What the browser says its adapter is (SwiftShader: vendor google, architecture swiftshader).
  const adapter = backend === 'webgpu' && navigator.gpu ? (await navigator.gpu.requestAdapter())?.info : null;
  const info = { backend: session.backend, fallback_reason: session.fallbackReason ?? null, navigator_gpu_adapter: adapter ? { vendor: adapter.vendor, architecture: adapter.architecture, device: adapter.device, description: adapter.description } : null };
  session.free();
  return { cold, create_s, first, warm, info };
}

// The reference: the Node wasm CPU on the same inputs.
const pkg = await nodePackage();
const reference = async (n, seed) => {
  const high = blobs(n, 50, n);
  const r = await pkg.evaluate({ high, lows: [projection(high, seed)], specs: SPEC, backend: 'cpu' });
  return JSON.parse(JSON.stringify(r.projections[0].scores));
};

// The page: the unpacked package and the data module, served from a throw-away folder.
const site = mkdtempSync(path.join(os.tmpdir(), 'faithful-bench-site-'));
symlinkSync(packageDir, path.join(site, 'faithful-dr'));
symlinkSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'npm_session_data.mjs'), path.join(site, 'npm_session_data.mjs'));
writeFileSync(path.join(site, 'index.html'), '<!doctype html><meta charset="utf-8"><title>faithful-dr benchmark</title>\n');
const server = await serveStatic(site);
const browser = await launchChromium();
const browserVersion = browser.version();
const loadStart = os.loadavg();
const rows = [];
let mismatches = 0;
try {
  for (const backend of backends) {
    for (const n of sizes) {
      say(`${backend} n=${n}: ${repeat} cold evaluate, a session's first and ${repeat} warm measure (load ${os.loadavg()[0].toFixed(2)})`);
      const page = await browser.newPage();
      const log = [];
      page.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
      await page.goto(`${server.base}/index.html`);
      let r;
      try {
        r = await page.evaluate(inPage, { n, backend, seeds, spec: SPEC });
      } catch (e) {
        throw new Error(`${backend} n=${n}: ${e.message}\n${log.join('\n')}`);
      }
      await page.close();
      // Every call's scores against the Node wasm CPU's on the same projection.
      const calls = [...r.cold.map((c, i) => [`cold ${i}`, c, seeds.cold[i]]), ['first', r.first, seeds.first], ...r.warm.map((c, i) => [`warm ${i}`, c, seeds.warm[i]])];
      const equal = [];
      for (const [label, c, seed] of calls) {
        try {
          assert.deepStrictEqual(c.scores, await reference(n, seed));
          equal.push(true);
        } catch (e) {
          mismatches++;
          equal.push(false);
          say(`MISMATCH ${backend} n=${n} ${label}: ${e.message.slice(0, 400)}`);
        }
      }
      const servedBy = [...new Set(calls.map(([, c]) => JSON.stringify(c.served)))].map((s) => JSON.parse(s));
      const row = {
        n,
        dim: 50,
        spec: SPEC[0],
        backend_requested: backend,
        served: servedBy,
        session: r.info,
        cold_evaluate_s: r.cold.map((c) => c.s),
        session_create_s: r.create_s,
        session_first_s: r.first.s,
        session_warm_s: r.warm.map((c) => c.s),
        knn_high_reused_warm: r.warm.every((c) => c.knn_high_reused),
        high_ranks_warm: [...new Set(r.warm.map((c) => c.high_ranks))],
        speedup_median: median(r.cold.map((c) => c.s)) / median(r.warm.map((c) => c.s)),
        scores_equal_wasm_cpu: `${equal.filter(Boolean).length} of ${equal.length} calls`,
        trustworthiness_continuity_first: r.first.scores.map((s) => s.values),
      };
      rows.push(row);
      say(`${backend} n=${n}: cold ${row.cold_evaluate_s.map((x) => x.toFixed(2)).join('/')} s, first ${row.session_first_s.toFixed(2)} s, warm ${row.session_warm_s.map((x) => x.toFixed(2)).join('/')} s, equal: ${row.scores_equal_wasm_cpu}, served ${JSON.stringify(servedBy)}`);
      const slowest = Math.max(median(row.cold_evaluate_s), median(row.session_warm_s));
      if (slowest > maxCallS && sizes.some((m) => m > n)) {
        say(`${backend}: a call took ${slowest.toFixed(0)} s at n=${n} (> ${maxCallS} s): larger sizes skipped`);
        rows.push({ n: sizes.filter((m) => m > n), backend_requested: backend, skipped: `a median call at n=${n} took ${slowest.toFixed(1)} s (> --max-call-s ${maxCallS})` });
        break;
      }
    }
  }
} finally {
  await browser.close();
  server.close();
  rmSync(site, { recursive: true, force: true });
}

console.log(JSON.stringify({
  what: 'faithful-dr in headless Chromium: Session.measure (warm) vs evaluate (cold), T&C k=20, exact; WebGPU on SwiftShader (software) and the wasm CPU',
  package_version: pkg.version(),
  browser: `Chromium ${browserVersion} (${process.env.CHROMIUM ?? '/usr/bin/chromium'}, headless, tests/browser/flags.mjs)`,
  reference: `node ${process.version} wasm CPU (the same package's node.js), same inputs`,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  load_average_at_start: loadStart,
  load_average_at_end: os.loadavg(),
  timing: 'performance.now() in the page around each call; data generated outside the clock; every call listed',
  rows,
  mismatches,
}, null, 2));
process.exit(mismatches ? 1 : 0);
