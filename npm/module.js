// Inside the package only (package.json's exports name index.js, node.js and worker.js, not
// this file): the compiled wasm module the entry instantiated, which the pool's workers
// instantiate too. node.js sets it when it instantiates synchronously (Node allows it, and
// wasm-bindgen's async init looks up the global `Request`, which makes Node load its fetch
// implementation, ~25 ms), so the public `init` keeps wasm-bindgen's options only.
let compiled;

/** The module `init` compiled or was given, if any. */
export function compiledModule() {
  return compiled;
}

/** Records the module the entry instantiated. */
export function adopt(module) {
  compiled = module;
}
