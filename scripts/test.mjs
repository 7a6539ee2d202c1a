// `npm test [-- FILE|DIR …] [--durations] [--test-name-pattern=…]`: the suite, through tsx and
// node:test, in workers. `node --test` runs WARREN_TEST_CONCURRENCY worker processes (2); each
// takes test files one at a time from a queue, longest first by test/durations.json, and runs
// them one after another (test/helpers/shard.ts). So the sources are loaded once a worker rather
// than once a file (that load was a third of the suite's time), and a worker that finishes a
// file takes the longest one left, so the workers end within about one file of each other.
// After the summary, every failed test is listed again with its error (whose stack names its
// file), so the end of the output says what failed. `--durations` rewrites test/durations.json from this run.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tapDigest } from './tap-digest.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const DURATIONS = process.env.WARREN_TEST_DURATIONS ?? join(ROOT, 'test', 'durations.json');

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(
    [
      'npm test [-- FILE|DIR …] [--durations] [--test-*=…]',
      '',
      'Runs test/*/*.test.ts (or the files and folders named) through tsx and node:test in',
      'WARREN_TEST_CONCURRENCY worker processes (default 2), each taking the longest file left.',
      '  --durations   rewrite test/durations.json (the order files are taken in) from this run',
      '  --test-*      passed to node (e.g. --test-name-pattern="resume")',
      'Switches the tests read: docs/testing.md (CI, WARREN_TEST_PG, FUZZ_CASES, …).',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const record = args.includes('--durations');
const nodeFlags = args.filter((a) => a.startsWith('--test-'));
const named = args.filter((a) => !a.startsWith('--'));
const files = (named.length > 0 ? named.flatMap(expand) : defaultFiles()).map((f) => resolve(f));
if (files.length === 0) fail('no test files');
const concurrency = Number(process.env.WARREN_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) fail('WARREN_TEST_CONCURRENCY: a whole number ≥ 1');

const ordered = longestFirst(files, knownDurations());
const workers = Math.min(concurrency, ordered.length);
/** Each file's bound (WARREN_TEST_FILE_TIMEOUT_MS), as when a file was a process of its own; a worker's is the sum of its files'. */
const FILE_TIMEOUT_MS = Number(process.env.WARREN_TEST_FILE_TIMEOUT_MS) || 240_000;
const workerTimeout = ordered.length * FILE_TIMEOUT_MS + 60_000;
const dir = mkdtempSync(join(tmpdir(), 'warren-shards-'));
// The queue: one entry a file, named so that sorting them gives the order they are taken in.
const queue = join(dir, 'queue');
mkdirSync(queue);
for (const [i, file] of ordered.entries()) writeFileSync(join(queue, String(i).padStart(5, '0')), file);
const helper = pathToFileURL(join(ROOT, 'test', 'helpers', 'shard.ts')).href;
const workerFiles = Array.from({ length: workers }, (_, i) => {
  const file = join(dir, `worker-${i + 1}.test.mjs`);
  writeFileSync(
    file,
    `import { runQueue } from ${JSON.stringify(helper)};\nawait runQueue(${JSON.stringify(queue)}, ${JSON.stringify(ROOT)});\n`,
  );
  return file;
});
process.stderr.write(`# ${files.length} test files, ${workers} workers taking them longest first\n`);

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${workerTimeout}`,
    ...nodeFlags,
    ...workerFiles,
  ],
  {
    cwd: ROOT,
    stdio: ['inherit', 'pipe', 'inherit'],
    env: { ...process.env, WARREN_TEST_RESULTS: dir, WARREN_TEST_FILE_TIMEOUT_MS: String(FILE_TIMEOUT_MS) },
  },
);
const digest = tapDigest();
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  digest.write(chunk);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  const measured = record ? readDurations() : {};
  rmSync(dir, { recursive: true, force: true });
  const { failures } = digest.end();
  if (failures.length > 0) {
    process.stdout.write(`\n# ${failures.length} failed:\n`);
    for (const f of failures) process.stdout.write(`# ✗ ${f.name}\n${f.detail}`);
  }
  if (record) writeDurations(measured);
  process.exit(code ?? (signal ? 1 : 0));
});

/** test/*\/*.test.ts, as the shell would expand it. */
function defaultFiles() {
  const test = join(ROOT, 'test');
  return readdirSync(test, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .flatMap((name) => expand(join(test, name)));
}

/** A file as it is; a folder as its *.test.ts files. */
function expand(path) {
  if (!statSync(path, { throwIfNoEntry: false })) fail(`${path}: no such file or folder`);
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((n) => n.endsWith('.test.ts'))
    .sort()
    .map((n) => join(path, n));
}

function knownDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

/** Longest first (what the workers take first); a file with no recorded duration counts as the median one. */
function longestFirst(paths, durations) {
  const known = Object.values(durations).sort((a, b) => a - b);
  const median = known.length > 0 ? known[Math.floor(known.length / 2)] : 10;
  return paths
    .map((file) => ({ file, seconds: durations[relative(ROOT, file)] ?? median }))
    .sort((a, b) => b.seconds - a.seconds)
    .map((f) => f.file);
}

/** What each worker measured of its files (test/helpers/shard.ts writes them as it exits). */
function readDurations() {
  const measured = {};
  for (const name of readdirSync(dir).filter((n) => n.startsWith('durations-')))
    Object.assign(measured, JSON.parse(readFileSync(join(dir, name), 'utf8')));
  return measured;
}

function writeDurations(measured) {
  const merged = { ...knownDurations() };
  for (const [file, seconds] of Object.entries(measured)) merged[file] = Math.round(seconds * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
  process.stderr.write(`# durations of ${Object.keys(measured).length} files written to ${DURATIONS}\n`);
}

function fail(why) {
  process.stderr.write(`npm test: ${why}\n`);
  process.exit(2);
}
