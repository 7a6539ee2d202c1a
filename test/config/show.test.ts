/**
 * `warren config show`: the configuration `serve` would run with and where each value came
 * from, as a table and as JSON, read from the same flags, variables and file, with no server.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { serveCommand } from '../../src/app/serve.ts';
import { configShowCommand } from '../../src/surfaces/cli/config.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { cli, tempDir } from '../cli/helpers.ts';

interface Shown {
  file: string | null;
  settings: Record<
    string,
    { value: unknown; source: string; from: string | null; env: string; flag: string }
  >;
}

const locals = [configShowCommand, serveCommand];

function withFile(name: string, text: string): string {
  const cwd = tempDir();
  mkdirSync(join(cwd, '.warren'));
  writeFileSync(join(cwd, '.warren', name), text);
  return cwd;
}

describe('warren config show', () => {
  const everySessionTool = allSyscalls.filter((s) => s.callers.includes('session')).map((s) => s.name);
  const cwd = withFile(
    'warren.config.yaml',
    `limits:\n  maxDepth: 4\n  maxChildren: 3\ntermGraceMs: 5000\ntiers:\n  worker: [${everySessionTool.join(', ')}]\n`,
  );
  const env = { WARREN_MAX_CHILDREN: '6', WARREN_RECONCILE_INTERVAL_MS: '2000' };
  const file = join(cwd, '.warren', 'warren.config.yaml');

  it('--json: every key with its value, source and origin', async () => {
    const r = await cli(['config', 'show', '--json', '--reconcile-interval-ms', '3000'], {
      cwd,
      env,
      locals,
    });
    assert.equal(r.code, 0, r.stderr);
    const shown = JSON.parse(r.stdout) as Shown;
    assert.equal(shown.file, file);
    assert.deepEqual(shown.settings['limits.maxDepth'], {
      value: 4,
      source: 'file',
      from: `${file}: limits.maxDepth`,
      env: 'WARREN_MAX_DEPTH',
      flag: '--max-depth',
    });
    assert.equal(shown.settings['limits.maxChildren']!.value, 6);
    assert.equal(shown.settings['limits.maxChildren']!.source, 'env');
    assert.equal(shown.settings.reconcileIntervalMs!.value, 3000);
    assert.equal(shown.settings.reconcileIntervalMs!.source, 'flag');
    assert.equal(shown.settings.maxWaitMs!.source, 'default');
    assert.match(String(shown.settings.nodeId!.value), /^[0-9a-f]{12}$/);
    assert.equal(shown.settings['server.db']!.value, join(cwd, '.warren', 'warren.db'));
    const agent = shown.settings['tiers.agent']!;
    assert.equal(agent.value, null, 'an unset tier: sessions at depth 2 follow their jobs');
    assert.equal(agent.from, 'not set: sessions follow their jobs');
  });

  it('a table: KEY, VALUE, SOURCE, FROM; long tool lists wrap instead of being cut', async () => {
    const r = await cli(['config', 'show'], { cwd, env, locals });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.startsWith(`config file: ${file}\n`), r.stdout);
    const lines = r.stdout.split('\n');
    assert.match(lines.find((l) => l.startsWith('KEY'))!, /^KEY\s+VALUE\s+SOURCE\s+FROM$/);
    assert.match(
      lines.find((l) => l.startsWith('limits.maxDepth'))!,
      /^limits\.maxDepth\s+4\s+file\s+\S+warren\.config\.yaml: limits\.maxDepth$/,
    );
    assert.match(lines.find((l) => l.startsWith('limits.maxChildren'))!, /\s6\s+env\s+WARREN_MAX_CHILDREN$/);
    assert.match(lines.find((l) => l.startsWith('retentionDays'))!, /\s30\s+default$/);
    assert.ok(!r.stdout.includes('…'), 'nothing is cut');
    assert.ok(r.stdout.includes('session_events'), 'the whole worker tier the file set is there');
  });

  it('says what an unset key means: "never" and "none" for retention and TTL, the rest in words', async () => {
    const r = await cli(['config', 'show', '--retention-days', 'never'], { cwd: tempDir(), env: {}, locals });
    assert.match(r.stdout, /\nretentionDays\s+never\s+flag\s+--retention-days\n/);
    assert.match(r.stdout, /\ndefaultTtlSeconds\s+none\s+default\n/);
    assert.match(r.stdout, /^config file: none/);
    // Other unset keys say what unset means, not "never".
    assert.match(r.stdout, /\nplugins\.enable\s+\(all: a new database enables every plugin\)\s+default\n/);
    assert.match(r.stdout, /\nauth\.issuerUrl\s+\(off: no external JWTs\)\s+default\n/);
    assert.match(r.stdout, /\ntracing\.endpoint\s+\(off: no traces exported\)\s+default\n/);
    assert.equal(r.stdout.match(/\bnever\b/g)?.length, 1, 'only the retention the flag set says never');
  });

  it('a bad setting: exit 2 and the message names it', async () => {
    const bad = withFile('warren.config.json', JSON.stringify({ limits: { maxDepth: 'four' } }));
    const r = await cli(['config', 'show'], { cwd: bad, env: {}, locals });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /warren\.config\.json: limits\.maxDepth: .*expected number/);
    assert.equal(r.stdout, '');
  });

  it('an unknown flag is a usage error that points at help', async () => {
    const r = await cli(['config', 'show', '--max-depht', '3'], { cwd: tempDir(), env: {}, locals });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown option '--max-depht'/);
    assert.match(r.stderr, /warren config show --help/);
  });

  it('--help lists every setting with its variable', async () => {
    const r = await cli(['config', 'show', '--help'], { env: {}, locals });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--max-depth <n>\s+WARREN_MAX_DEPTH\s+deepest spawn/);
    assert.match(r.stdout, /--config <file>/);
    const serveHelp = await cli(['serve', '--help'], { env: {}, locals });
    assert.match(serveHelp.stdout, /--tier-agent <a,b,…>\s+WARREN_TIER_AGENT\s+depth-tier policy/);
  });
});
