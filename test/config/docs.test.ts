/**
 * docs/configuration.md keeps up with the key table: every key, variable and flag is in its
 * table, and its depth-4 example is a file `warren serve` accepts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONFIG_KEYS } from '../../src/config/keys.ts';
import { loadConfig } from '../../src/config/load.ts';

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('lists every key with its environment variable and flag', () => {
    for (const key of CONFIG_KEYS) {
      const row = doc.split('\n').find((l) => l.includes(`| \`${key.env}\` |`));
      assert.ok(row, `a row for ${key.env}`);
      assert.ok(row.includes(`\`--${key.flag}\``), `${key.env}'s row names --${key.flag}`);
      if (!key.notInFile)
        assert.ok(row.startsWith(`| \`${key.path}\` |`), `${key.env}'s row starts with ${key.path}`);
    }
  });

  it('its depth-4 example loads, opening the agent and worker tiers to ipc_spawn', () => {
    const yaml = /```yaml\n# \.warren\/warren\.config\.yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(yaml, 'the example file');
    const cwd = mkdtempSync(join(tmpdir(), 'warren-docs-'));
    try {
      mkdirSync(join(cwd, '.warren'));
      writeFileSync(join(cwd, '.warren', 'warren.config.yaml'), yaml);
      const c = loadConfig({ flags: {}, env: {}, cwd });
      assert.equal(c.options.kernel?.limits?.maxDepth, 4);
      assert.ok(c.tiers.agent?.includes('ipc_spawn') && c.tiers.worker?.includes('ipc_spawn'));
      assert.equal(c.tiers.orchestrator, null, 'an unset tier leaves depth 1 to jobs');
      assert.deepEqual(
        c.options.gating?.grants?.deny,
        ['session_delete'],
        'the default grant reaches every session',
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
