/**
 * The reconcile loop takes its phases from the loaded plugins, after the kernel's own;
 * one phase's failure does not stop the others; a tick never overlaps the previous one.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { definePlugin, type Plugin } from '../../src/contract/plugin.ts';
import { corePlugin } from '../../src/plugins/core/plugin.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';

interface Probe {
  running: number;
  maxRunning: number;
  runs: number;
  order: string[];
}

/** A plugin whose one phase takes `ms` and records how many copies of it run at once. */
const slowPlugin = (probe: Probe, ms: number): Plugin =>
  definePlugin({
    name: 'slow',
    version: '1.0.0',
    summary: 'a phase that takes its time',
    start: () => ({
      phases: [
        {
          name: 'broken',
          run: async () => {
            probe.order.push('broken');
            throw new Error('this phase always fails');
          },
        },
        {
          name: 'slow',
          run: async () => {
            probe.order.push('slow');
            probe.running++;
            probe.maxRunning = Math.max(probe.maxRunning, probe.running);
            await new Promise((r) => setTimeout(r, ms));
            probe.running--;
            probe.runs++;
          },
        },
      ],
    }),
  }) as Plugin;

forEachWarren(
  'reconcile loop',
  (target) => {
    it('never overlaps a tick, however short the interval, and isolates a failing phase', async () => {
      const probe: Probe = { running: 0, maxRunning: 0, runs: 0, order: [] };
      // A tick every 5 ms, each taking 60 ms or more: without the guard, ticks would pile up.
      const w = await target.open({
        kernel: { reconcileIntervalMs: 5 },
        plugins: { known: [corePlugin as Plugin, slowPlugin(probe, 60)] },
      });
      const errors: unknown[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => errors.push(args);
      try {
        await until(() => probe.runs >= 4, 20_000, 'four ticks');
        // Calling a tick by hand while one runs joins it rather than starting another.
        const [a, b] = [w.kernel.reconcile(), w.kernel.reconcile()];
        assert.equal(a, b);
        await a;
      } finally {
        console.error = original;
      }
      assert.equal(probe.maxRunning, 1, 'one tick at a time');
      assert.ok(
        errors.some((e) => String(e).includes('slow:broken')),
        'the failing phase is reported by name',
      );
      assert.deepEqual(
        probe.order.slice(0, 4),
        ['broken', 'slow', 'broken', 'slow'],
        'the next phase still runs',
      );
      const phases = (w.kernel as unknown as { reconciler: { phases: Array<{ name: string }> } }).reconciler
        .phases;
      const names = phases.map((p) => p.name);
      assert.ok(names.indexOf('retention') < names.indexOf('slow:broken'), "the kernel's phases first");
    });
  },
  ['sqlite'],
);
