// Times SickleJS's own Sammon, CCA, residual variance, density preservation and NeRV on one
// dataset, for benches/measures_compare.py. SickleJS is bundled from its sources at run time
// (no SickleJS code here):
//   npx esbuild SICKLE/src/index.ts --bundle --format=esm --platform=node --outfile=/tmp/sickle.mjs
//   node benches/sickle_worker.mjs /tmp/sickle.mjs HD.npy LD.npy MEASURE REPEAT
// prints {"times": [seconds...], "value": v}. Loading the data is not timed.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, hd, ld, measure, repeat] = process.argv.slice(2);
const s = await import(pathToFileURL(bundle).href);

/** A float64 C-order .npy file as rows. */
function npy(path) {
  const buf = readFileSync(path);
  const len = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + len);
  const [n, d] = header.match(/\((\d+), (\d+)\)/).slice(1).map(Number);
  const data = new Float64Array(buf.buffer.slice(buf.byteOffset + 10 + len, buf.byteOffset + 10 + len + 8 * n * d));
  return Array.from({ length: n }, (_, i) => Array.from(data.subarray(i * d, (i + 1) * d)));
}

const X = s.toVectors(npy(hd));
const Y = s.toVectors(npy(ld));
const fused = (opts) => s.reduceFused([s.fusedPartial(X, Y, { ranks: false, distances: true, ...opts })]);
const run = {
  sammon: () => s.sammonStress(fused({}).embedding).value,
  cca_stress: () => s.curvilinearStress(fused({ ccaLambda: 5 }).embedding).value,
  residual_variance: () => s.residualVariance(fused({}).moments).value,
  density_preservation: () => s.densityPreservation(s.reduceFused([s.fusedPartial(X, Y, { ranks: true, distances: true, densityK: 20 })]).structure).value,
  nerv: () => s.nerv(s.nervPass(X, Y, { lambda: 0.5, perplexity: 30 })).value,
}[measure];
const times = [];
let value;
for (let r = 0; r < Number(repeat); r++) {
  const t0 = performance.now();
  value = run();
  times.push((performance.now() - t0) / 1000);
}
process.stdout.write(JSON.stringify({ times, value }) + "\n");
