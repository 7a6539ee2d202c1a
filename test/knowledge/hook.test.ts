import assert from 'node:assert/strict';
import { it } from 'node:test';
import { definePlugin, type Plugin } from '../../src/contract/plugin.ts';
import { corePlugin } from '../../src/plugins/core/plugin.ts';
import { knowledgePlugin } from '../../src/plugins/knowledge/plugin.ts';
import { orchestrationPlugin } from '../../src/plugins/orchestration/plugin.ts';
import type { Log } from '../../src/util/log.ts';
import { eventsOf, forEachWarren, outputs } from '../helpers/warrens.ts';
import { create, waitTask } from '../orchestration/helpers.ts';

/**
 * The start-context hook is the plugins', not knowledge's: any plugin may contribute; parts
 * come in load order; one that throws is logged and left out, and the session still starts.
 */
const contributor = (
  name: string,
  fn: () => Promise<{ text: string; ref: Record<string, unknown> } | null>,
) =>
  definePlugin({
    name,
    version: '0.0.1',
    summary: 'test contributor',
    dependsOn: ['orchestration'],
    start: () => ({ startContext: fn }),
  }) as Plugin;

forEachWarren('start-context hook', (t) => {
  it('joins every plugin’s part in load order; a failing one is logged and left out', async () => {
    const errors: string[] = [];
    const log: Log = { error: (_o, m) => errors.push(m), warn: () => {}, info: () => {}, debug: () => {} };
    const known = [
      corePlugin,
      orchestrationPlugin,
      knowledgePlugin,
      contributor('alpha', async () => ({ text: 'ALPHA SAYS', ref: { n: 1 } })),
      contributor('broken', async () => {
        throw new Error('index offline');
      }),
      contributor('quiet', async () => null),
      contributor('omega', async () => ({ text: 'OMEGA', ref: { n: 2 } })),
    ] as Plugin[];
    const w = await t.open({ plugins: { known }, log });
    const task = await create(w, {
      title: 'x',
      prompt: 'the prompt',
      spawn: { script: { steps: [{ say: '${self.prompt}' }] } },
    });
    const done = await waitTask(w, task.id, 'complete', 20_000);
    assert.deepEqual(await outputs(w, done.sessionId), ['ALPHA SAYS\n\nOMEGA\n\nthe prompt']);
    const spawned = (await eventsOf(w, done.sessionId)).find((e) => e.type === 'session.spawned')!;
    assert.equal(spawned.payload.prompt, 'the prompt');
    assert.deepEqual((spawned.payload.context as { parts: unknown }).parts, [
      { plugin: 'alpha', n: 1 },
      { plugin: 'omega', n: 2 },
    ]);
    assert.ok(
      errors.some((m) => /plugin broken: start context failed/.test(m)),
      errors.join('\n'),
    );
  });
});
