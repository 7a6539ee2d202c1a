#!/usr/bin/env node
// Runs the compiled build in dist/ (`npm run build`; `npm ci` and `npm test` run it).
// Without a build, or with WARREN_FROM_SOURCE=1, it runs the TypeScript sources through
// tsx instead, which compiles them at every start: seconds instead of milliseconds.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22+ caches compiled code between runs; on Node 20 this is a no-op.
module.enableCompileCache?.();

const build = new URL('../dist/main.js', import.meta.url);
const fromSource = process.env.WARREN_FROM_SOURCE === '1';

let main;
if (!fromSource && existsSync(build)) {
  ({ main } = await import(build.href));
} else {
  if (!fromSource)
    process.stderr.write('warren: no build in dist/ (npm run build); running the sources via tsx\n');
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
