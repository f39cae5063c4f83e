// The Node entry of faithful-dr ("node" condition in package.json): the same API as the browser
// entry (index.js), on the wasm CPU reference (Node has no WebGPU; a request for "webgpu" falls
// back and says so in run.fallback_reason); `workers` start worker_threads. init() reads the
// .wasm next to this file: Node's fetch cannot read file: URLs, which the browser entry's
// init() would use.
import { readFile } from 'node:fs/promises';
import { initSync } from './faithful.js';
import initIndex from './index.js';
import { adopt } from './module.js';

export * from './index.js';

export default async function init(input) {
  if (input !== undefined) return initIndex(input);
  const module = await WebAssembly.compile(await readFile(new URL('./faithful_bg.wasm', import.meta.url)));
  // Instantiated synchronously, as Node allows (module.js says why), and recorded for the pool.
  adopt(module);
  return initSync({ module });
}
