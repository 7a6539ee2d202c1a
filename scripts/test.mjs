// `npm test [-- FILE|DIR …] [--durations] [--test-name-pattern=…]`: the suite, through tsx and
// node:test, in shards. Each shard is one process that runs several test files one after another
// (test/helpers/shard.ts), so the sources are loaded once a shard rather than once a file — that
// load was a third of the suite's time. Files are packed into shards by their durations in
// test/durations.json (longest first), and `node --test` runs WARREN_TEST_CONCURRENCY shards at a
// time (2). After the summary, every failed test is listed again with its error (whose stack
// names its file), so the end of the output says what failed. `--durations` rewrites test/durations.json from this run.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tapDigest } from './tap-digest.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const DURATIONS = process.env.WARREN_TEST_DURATIONS ?? join(ROOT, 'test', 'durations.json');
/** A shard holds at most this much work (seconds): fewer loads against a finer balance. */
const SHARD_SECONDS = 120;
/** The shards at the end hold no less than this (seconds), what one more load is worth. */
const TAIL_SECONDS = 20;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(
    [
      'npm test [-- FILE|DIR …] [--durations] [--test-*=…]',
      '',
      'Runs test/*/*.test.ts (or the files and folders named) through tsx and node:test, several',
      'files to a process, WARREN_TEST_CONCURRENCY processes at a time (default 2).',
      '  --durations   rewrite test/durations.json (how files are packed) from this run',
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

const shards = pack(files, knownDurations());
/** Each file's bound (WARREN_TEST_FILE_TIMEOUT_MS), as when a file was a process of its own; a shard's is the sum of its files'. */
const FILE_TIMEOUT_MS = Number(process.env.WARREN_TEST_FILE_TIMEOUT_MS) || 240_000;
const shardTimeout = Math.max(...shards.map((s) => s.files.length)) * FILE_TIMEOUT_MS + 60_000;
const dir = mkdtempSync(join(tmpdir(), 'warren-shards-'));
const shardFiles = shards.map((shard, i) => {
  const file = join(dir, `shard-${String(i + 1).padStart(2, '0')}.test.mjs`);
  const helper = pathToFileURL(join(ROOT, 'test', 'helpers', 'shard.ts')).href;
  writeFileSync(
    file,
    `import { runFiles } from ${JSON.stringify(helper)};\nawait runFiles(${JSON.stringify(shard.files)}, ${JSON.stringify(ROOT)});\n`,
  );
  return file;
});
process.stderr.write(
  `# ${files.length} test files in ${shards.length} processes, ${concurrency} at a time\n`,
);

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${shardTimeout}`,
    ...nodeFlags,
    ...shardFiles,
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

/**
 * Shards that shrink towards the end, as guided self-scheduling makes them: each takes the
 * longest files left that fit in a share of the work left (a slot's half of it, at most
 * SHARD_SECONDS, at least TAIL_SECONDS). Files' times vary from run to run by a tenth or more;
 * equal shards left one slot running the last whole shard alone (a 13-shard run: 606 s against
 * 519 s), small last ones even the slots out. A file with no recorded duration counts as the
 * median one. Returned longest first, the order they should start in.
 */
function pack(paths, durations) {
  const known = Object.values(durations).sort((a, b) => a - b);
  const median = known.length > 0 ? known[Math.floor(known.length / 2)] : 10;
  let left = paths
    .map((file) => ({ file, seconds: durations[relative(ROOT, file)] ?? median }))
    .sort((a, b) => b.seconds - a.seconds);
  let work = left.reduce((s, f) => s + f.seconds, 0);
  const shards = [];
  while (left.length > 0) {
    const share = Math.min(SHARD_SECONDS, Math.max(TAIL_SECONDS, work / concurrency));
    const shard = { files: [], seconds: 0 };
    const rest = [];
    for (const f of left) {
      if (shard.files.length > 0 && shard.seconds + f.seconds > share) rest.push(f);
      else {
        shard.files.push(f.file);
        shard.seconds += f.seconds;
      }
    }
    shards.push(shard);
    work -= shard.seconds;
    left = rest;
  }
  return shards.sort((a, b) => b.seconds - a.seconds);
}

/** What each shard measured of its files (test/helpers/shard.ts writes them as it exits). */
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
