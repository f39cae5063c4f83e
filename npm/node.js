// The Node entry of faithful-dr ("node" condition in package.json): the same API as the browser
// entry (index.js), on the wasm CPU reference (Node has no WebGPU; a request for "webgpu" falls
// back and says so in run.fallback_reason); `workers` start worker_threads. init() reads the
// .wasm next to this file: Node's fetch cannot read file: URLs, which the browser entry's
// init() would use.
import { readFile } from 'node:fs/promises';
import initIndex from './index.js';

export * from './index.js';

export default async function init(input) {
  if (input !== undefined) return initIndex(input);
  const bytes = await readFile(new URL('./faithful_bg.wasm', import.meta.url));
  return initIndex({ module_or_path: await WebAssembly.compile(bytes), sync: true });
}
