// The Node side of the npm package benchmarks (benches/npm_session.mjs, npm_session_browser.mjs):
// their command line, `PACKAGE_DIR [--name value]...`, and the package's Node entry (the wasm CPU).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
/** The unpacked faithful-dr (scripts/npm_pack.sh DIR, then `tar xzf`: its package/ folder). */
export const packageDir = path.resolve(args[0] ?? '.');
/** The value after `--name`, else `dflt`. */
export const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : args[i + 1];
};
/** The package's Node entry, initialised. */
export async function nodePackage() {
  const pkg = await import(pathToFileURL(path.join(packageDir, 'node.js')).href);
  await pkg.default();
  return pkg;
}
