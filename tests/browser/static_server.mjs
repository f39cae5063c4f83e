// A static file server on a free loopback port (a secure context for WebGPU) for a folder: the
// throw-away app of npm.test.mjs, the unpacked package of benches/npm_session_browser.mjs.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.ts': 'text/plain' };

/** Serves `root` (index.html for a folder); resolves to { base: 'http://127.0.0.1:PORT', close }.
 * Everything under `/isolated/` is `root` again, cross-origin isolated (COOP/COEP headers on every
 * response, the workers' scripts included: the worker pool then shares the original space
 * through a SharedArrayBuffer). */
export async function serveStatic(root) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const isolated = url.pathname.startsWith('/isolated/');
    const file = path.join(root, decodeURIComponent(isolated ? url.pathname.slice('/isolated'.length) : url.pathname));
    if (!file.startsWith(root)) return res.writeHead(403).end();
    try {
      const body = readFileSync(file.endsWith(path.sep) ? path.join(file, 'index.html') : file);
      const headers = { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' };
      if (isolated) {
        headers['cross-origin-opener-policy'] = 'same-origin';
        headers['cross-origin-embedder-policy'] = 'require-corp';
      }
      res.writeHead(200, headers).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
