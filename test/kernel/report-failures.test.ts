/**
 * An agent's reports are fire-and-forget for its runtime (`void sink.idle()`): when one cannot
 * be recorded (the database is locked past its timeout, or gone) the failure is logged, and
 * nothing is left unhandled to end the server with every other agent in it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Core } from '../../src/kernel/core.ts';
import { Delivery } from '../../src/kernel/delivery.ts';
import { soloNode } from '../../src/kernel/node.ts';
import { agentSink, ReportQueue } from '../../src/kernel/reports.ts';
import type { SessionsTable } from '../../src/store/schema.ts';
import type { Log } from '../../src/util/log.ts';
import { forEachStore } from '../helpers/stores.ts';

forEachStore(
  'agent reports that cannot be recorded',
  (target) => {
    it('are logged, and no report method leaves a rejection unhandled', async () => {
      const store = await target.open();
      await store.close();
      const errors: string[] = [];
      const log: Log = { error: (_o, msg) => errors.push(String(msg)), warn() {}, info() {}, debug() {} };
      const core = { store, log, node: soloNode('test') } as unknown as Core;
      const hooks = { forget() {}, finish() {}, fenced() {}, runId: 'run_test' };
      const row = { id: 'ses_gone', zone: 'default', status: 'running' } as SessionsTable;
      const sink = agentSink(core, new ReportQueue(core), new Delivery(core), hooks, row);

      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        // As the runtimes call them: nobody waits.
        void sink.busy();
        void sink.output('text');
        void sink.event('tool_call', { name: 'x' });
        void sink.usage({ inputTokens: 1, outputTokens: 1 });
        void sink.activity('thinking');
        void sink.saveState({ k: 1 });
        void sink.idle();
        sink.spawned({ pid: 1, pgid: 1, startTime: '1' });
        sink.exited(1);
        sink.exit({ reason: 'completed', code: 0 });
        // Unhandled rejections are reported after the microtask queue drains: a few turns.
        for (let i = 0; i < 5; i++) await sleep(10);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      assert.deepEqual(unhandled, []);
      assert.ok(errors.length >= 10, `each failed report is logged: ${errors.join(' | ')}`);
    });
  },
  { backends: ['sqlite'] },
);
