// The Node entry of faithful-dr ("node" condition in package.json): the same API as the browser
// entry, on the wasm CPU reference (Node has no WebGPU; a request for "webgpu" falls back and
// says so in run.fallback_reason). init() reads the .wasm next to this file: Node's fetch cannot
// read file: URLs, which the browser entry's init() would use.
import { readFile } from 'node:fs/promises';
import initWeb from './faithful.js';

export * from './faithful.js';

export default async function init(input) {
  if (input !== undefined) return initWeb(input);
  const bytes = await readFile(new URL('./faithful_bg.wasm', import.meta.url));
  return initWeb({ module_or_path: bytes });
}
