// Opens a `faithful report` HTML file from its file:// URL in headless Chromium (Debian's, as
// the browser tests launch it) and prints what happened as JSON: the final <body data-status>,
// the seconds until it was set, the page's errors, and the views and left-outs it reports.
// The receipt of issue 28's n = 100 000 report uses it:
//
//   node benches/report_open.mjs /tmp/r100k/report.html
//
// (run from the repository root after `npm ci` in tests/browser, which provides playwright-core).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from '../tests/browser/flags.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node benches/report_open.mjs REPORT.html');
  process.exit(2);
}
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const errors = [];
page.on('console', (m) => m.type() === 'error' && errors.push(`[console.error] ${m.text()}`));
page.on('pageerror', (e) => errors.push(`[pageerror] ${e.message}`));
const t0 = performance.now();
await page.goto(pathToFileURL(path.resolve(file)).href, { timeout: 600_000 });
await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.status), null, {
  timeout: 600_000,
  polling: 250,
});
const seconds = (performance.now() - t0) / 1000;
const status = await page.evaluate(() => document.body.dataset.status);
const json = JSON.parse((await page.textContent('#view-json')) || '{}');
await browser.close();
const out = {
  file,
  status,
  seconds: Math.round(seconds * 10) / 10,
  errors,
  n: json.n,
  views: (json.views ?? []).map((v) => v.view),
  left_out: json.left_out,
};
console.log(JSON.stringify(out, null, 1));
process.exit(status === 'done' && errors.length === 0 ? 0 : 1);
