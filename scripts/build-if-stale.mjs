// `npm test`'s and `npm run bench`'s first step: build dist/ unless it is newer than every
// input. `npm ci` has just built it (prepare), and a second build of the same sources cost the
// CI run 15–20 s. `--stamp` (the end of `npm run build`) records when a build completed.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const STAMP = join(ROOT, 'dist', '.built');
/** What the build reads: a change to any of these (a file or a folder's entries) makes dist stale. */
const INPUTS = [
  'src',
  'web',
  'scripts/bundle-server.mjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}

const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const changed = INPUTS.map((p) => newerThan(join(ROOT, p), built)).find(Boolean);
if (built > 0 && !changed) {
  process.stderr.write('# dist/ is newer than its sources: not built again\n');
  process.exit(0);
}
process.stderr.write(`# building dist/ (${built === 0 ? 'no build recorded' : `${changed} changed`})\n`);
const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
process.exit(r.status ?? 1);

/** The first path under `path` (itself included) modified after `t`, or undefined. */
function newerThan(path, t) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (st.mtimeMs > t) return path.slice(ROOT.length + 1);
  if (!st.isDirectory()) return undefined;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const found = newerThan(join(path, entry), t);
    if (found) return found;
  }
  return undefined;
}
