// The wasm work, off the main thread. Messages: {id, op: 'init'} → {version, measures, example,
// webgpu}; {id, op: 'evaluate', request} → the result JSON string (the CLI's schema), exactly as
// faithful's evaluate() returned it; {id, op: 'bench', request} → the benchmark receipt JSON string
// (faithful bench's format), with {id, progress: {done, total, what}} messages while it runs.
// Replies: {id, ok: true, value, ms} or {id, ok: false, error}.
// Requests are served one at a time, in order.

let wasm = null;

async function load() {
  if (!wasm) {
    let mod;
    try {
      mod = await import('./pkg/faithful.js');
      await mod.default();
    } catch (e) {
      throw new Error(`could not load the wasm package (web/pkg/): ${e.message}. Build it with web/build.sh (web/serve.sh does).`);
    }
    wasm = mod;
  }
  return wasm;
}

// What the browser says about its WebGPU adapter (wgpu cannot see names in a browser).
async function adapterInfo() {
  if (!('gpu' in self.navigator)) return null;
  try {
    const a = await self.navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!a) return null;
    const i = a.info ?? {};
    return { vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '', description: i.description ?? '', fallback: !!i.isFallbackAdapter };
  } catch {
    return null;
  }
}

async function handle({ id, op, request }) {
  const t0 = performance.now();
  try {
    const m = await load();
    if (op === 'init') {
      const example = m.exampleData();
      const transfer = [example.high.data.buffer, ...example.lows.map((l) => l.data.buffer), example.labels.buffer];
      const adapter = await adapterInfo();
      const value = { version: m.version(), measures: m.measures(), example, webgpu: adapter !== null, adapter };
      self.postMessage({ id, ok: true, value, ms: performance.now() - t0 }, transfer);
    } else if (op === 'bench') {
      const a = await adapterInfo();
      const adapterLabel = a ? [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' ') || 'webgpu' : undefined;
      const progress = (done, total, what) => self.postMessage({ id, progress: { done, total, what } });
      const value = await m.bench({ ...request, adapterLabel, progress });
      self.postMessage({ id, ok: true, value, ms: performance.now() - t0 });
    } else if (op === 'evaluate') {
      const value = await m.evaluateJson(request);
      self.postMessage({ id, ok: true, value, ms: performance.now() - t0 });
    } else {
      throw new Error(`unknown operation ${op}`);
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // A trap (wasm panic) leaves the module unusable: the page starts a fresh worker.
    const fatal = e instanceof WebAssembly.RuntimeError;
    self.postMessage({ id, ok: false, error: fatal ? `internal error (wasm trap: ${message}); see the console` : message, fatal });
  }
}

let queue = Promise.resolve();
self.onmessage = (e) => {
  queue = queue.then(() => handle(e.data));
};
