// `warren …` (the real CLI, `serve` included) with extra Warren options from the environment
// (WARREN_TEST_OPTIONS, JSON: `kernel`, `gating`), for tests that need a node id per data dir,
// a short SIGTERM grace or opened tiers on a real server process. Everything else is the
// shipped code path, loaded as bin/warren.js loads it: the build in dist/, or with
// WARREN_FROM_SOURCE=1 the sources through tsx. Plain JavaScript, so a start costs no compile.
const fromSource = process.env.WARREN_FROM_SOURCE === '1';
if (fromSource) {
  const { register } = await import('tsx/esm/api');
  register();
}
const root = new URL(fromSource ? '../../src/' : '../../dist/', import.meta.url);
const ext = fromSource ? 'ts' : 'js';
// From app/server.*: the build's server is one bundle with its own Warren class.
const { Warren } = await import(new URL(`app/server.${ext}`, root).href);
const extra = JSON.parse(process.env.WARREN_TEST_OPTIONS ?? '{}');
const open = Warren.open.bind(Warren);
Warren.open = (opts = {}) => open({ ...opts, ...extra, kernel: { ...opts.kernel, ...extra.kernel } });

const { main } = await import(new URL(`main.${ext}`, root).href);
process.exitCode = await main(process.argv.slice(2));
