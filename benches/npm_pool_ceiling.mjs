// The ceiling any two-thread speedup has on a machine: the pool's one-worker call (T&C at
// k = 20 on a changing n = 5000 projection, as benches/npm_pool.mjs times it) run in one
// process alone, and in two independent processes at once (no pool, nothing shared: each its
// own Node, wasm instance and rank table). If two copies run each at 1/c of one's speed, two
// workers can give at most 2/c of one worker, whatever the pool does.
//
//   node benches/npm_pool_ceiling.mjs PACKAGE_DIR [--copies 1|2] [--n 5000] [--evals 20] [--warmup 20]
//
// With --copies 2 this process starts a second copy of itself (--copies 1) and both run their
// timed loops at the same time (each starts its loop when both have warmed up: a file barrier is
// not needed, the timed loop is long and both print their own medians). Prints JSON.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { nodePackage, opt, packageDir } from './npm_session_args.mjs';
import { blobs, median, projection } from './npm_session_data.mjs';

const copies = Number(opt('copies', '1'));
const n = Number(opt('n', '5000'));
const evals = Number(opt('evals', '20'));
const warmup = Number(opt('warmup', '20'));
const self = new URL(import.meta.url).pathname;

/** One copy: its session, warm-up, then `evals` timed calls; waits for `go` before timing. */
async function one(go) {
  const pkg = await nodePackage();
  const high = blobs(n, 50, 7);
  const s = await pkg.Session.create({ high, backend: 'cpu', workers: 1, residentRanks: 'always' });
  for (let e = 0; e < 2 + warmup; e++) await s.measure({ low: projection(high, 1000 + e), specs: ['tnc:k=20'] });
  const lows = Array.from({ length: evals }, (_, e) => projection(high, 2000 + e));
  await go();
  const calls = [];
  const t1 = performance.now();
  for (const low of lows) {
    const t = performance.now();
    await s.measure({ low, specs: ['tnc:k=20'] });
    calls.push((performance.now() - t) / 1000);
  }
  const seconds = (performance.now() - t1) / 1000;
  s.free();
  return { evaluations_per_s: evals / seconds, median_call_s: median(calls) };
}

if (opt('child', null) !== null) {
  // The second copy: says it is warm, waits for the parent's go, runs, prints its row.
  const row = await one(
    () =>
      new Promise((resolve) => {
        process.stdout.write('warm\n');
        process.stdin.once('data', resolve);
      }),
  );
  process.stdout.write(JSON.stringify(row) + '\n');
  process.exit(0);
}

let rows;
if (copies === 1) {
  rows = [await one(async () => {})];
} else {
  const child = spawn(process.execPath, [self, packageDir, '--child', '1', '--n', String(n), '--evals', String(evals), '--warmup', String(warmup)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const lines = [];
  let onLine = null;
  child.stdout.on('data', (d) => {
    out += d;
    let at;
    while ((at = out.indexOf('\n')) >= 0) {
      lines.push(out.slice(0, at));
      out = out.slice(at + 1);
      onLine?.();
    }
  });
  const nextLine = () => new Promise((resolve) => (lines.length > 0 ? resolve(lines.shift()) : (onLine = () => ((onLine = null), resolve(lines.shift())))));
  const mine = one(async () => {
    if ((await nextLine()) !== 'warm') throw new Error('the second copy did not warm up');
    child.stdin.write('go\n');
  });
  const theirs = mine.then(() => nextLine());
  rows = [await mine, JSON.parse(await theirs)];
  child.stdin.end();
}
console.log(JSON.stringify({
  what: 'the one-worker T&C call (k = 20, n as given, a new noisy projection each call) in `copies` independent processes at once',
  copies, n, evals, warmup_calls: warmup,
  runtime: `node ${process.version}`, cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length,
  load_average_1m_at_end: os.loadavg()[0],
  rows,
}));
process.exit(0);
