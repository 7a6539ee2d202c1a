/**
 * The plugin contract: dependency order, database-authoritative enablement, a plugin's
 * tables, syscalls, phases and subscribers, and what a disabled plugin leaves behind.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadOrder } from '../../src/syscalls/order.ts';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { type ProbeTrace, probePlugin, withProbes } from './probe.ts';

const trace = (): ProbeTrace => ({ events: [], seen: 0 });

describe('plugin load order', () => {
  const t = trace();
  const a = probePlugin('alpha', t);
  const b = probePlugin('beta', t, { dependsOn: ['alpha'] });
  const c = probePlugin('gamma', t, { dependsOn: ['beta'] });

  it('puts dependencies first, whatever order they are listed in', () => {
    const order = loadOrder([c, b, a], new Set(['alpha', 'beta', 'gamma']));
    assert.deepEqual(
      order.map((p) => p.name),
      ['alpha', 'beta', 'gamma'],
    );
  });

  it('names a cycle in full', () => {
    const x = probePlugin('xray', t, { dependsOn: ['zulu'] });
    const y = probePlugin('yankee', t, { dependsOn: ['xray'] });
    const z = probePlugin('zulu', t, { dependsOn: ['yankee'] });
    assert.throws(() => loadOrder([x, y, z], new Set(['xray', 'yankee', 'zulu'])), {
      message: 'plugin dependency cycle: xray → zulu → yankee → xray',
    });
  });

  it('refuses a missing or a disabled dependency, saying which', () => {
    const lonely = probePlugin('lonely', t, { dependsOn: ['nowhere'] });
    assert.throws(
      () => loadOrder([lonely], new Set(['lonely'])),
      /lonely depends on nowhere, which does not exist/,
    );
    assert.throws(
      () => loadOrder([a, b], new Set(['beta'])),
      /beta depends on alpha, which is disabled \(warren plugin enable alpha, or disable beta\)/,
    );
  });
});

forEachWarren('plugins', (target) => {
  it('brings plugins up in dependency order, runs their phases after the kernel, tears down in reverse', async () => {
    const t = trace();
    const known = withProbes(probePlugin('beta', t, { dependsOn: ['alpha'] }), probePlugin('alpha', t));
    const w = await target.open({ plugins: { known } });
    assert.deepEqual(t.events, ['start alpha', 'start beta']);
    await w.kernel.reconcile();
    assert.deepEqual(t.events.slice(2), ['phase alpha', 'phase beta']);
    const before = t.seen;
    const out = await call(w, 'alpha_ping', { note: 'x' });
    assert.deepEqual(out, { plugin: 'alpha', rows: 1, greeting: 'hello' });
    assert.ok(t.seen > before, 'the subscriber sees what commits');
    await w.close();
    assert.deepEqual(t.events.slice(-2), ['stop beta', 'stop alpha']);
  });

  it('seeds enablement once: the database decides after that', async () => {
    const t = trace();
    const known = withProbes(probePlugin('alpha', t), probePlugin('beta', t));
    const location = target.location();
    let w = await target.open({ location, plugins: { known, seed: ['alpha'] } });
    const list = (await call(w, 'plugin_list')).plugins as Array<{
      name: string;
      enabled: boolean;
      loaded: boolean;
    }>;
    assert.deepEqual(
      list.map((p) => [p.name, p.enabled, p.loaded]),
      [
        ['core', true, true],
        ['alpha', true, true],
        ['beta', false, false],
      ],
    );
    await w.close();
    // A different seed on the same database changes nothing.
    w = await target.open({ location, plugins: { known, seed: ['beta'] } });
    assert.ok(w.table.has('alpha_ping'));
    assert.ok(!w.table.has('beta_ping'));
    await w.close();
  });

  it('enable and disable persist, take effect on restart, and say so', async () => {
    const t = trace();
    const known = withProbes(probePlugin('alpha', t));
    const location = target.location();
    let w = await target.open({ location, plugins: { known } });
    assert.ok(w.table.has('alpha_ping'));
    const off = await call(w, 'plugin_disable', { name: 'alpha' });
    assert.equal(off.enabled, false);
    assert.equal(off.loaded, true, 'still loaded until the restart');
    assert.equal(off.restartRequired, true);
    assert.match(off.message, /restart the server/);
    assert.ok(w.table.has('alpha_ping'), 'nothing changes live');
    const events = await w.store.log.events({ type: 'plugin.disabled' });
    assert.equal(events.length, 1);
    await w.close();

    w = await target.open({ location, plugins: { known } });
    assert.ok(!w.table.has('alpha_ping'), 'gone after the restart');
    await assert.rejects(call(w, 'alpha_ping'), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'not_found');
      assert.match(e.message, /alpha_ping belongs to the alpha plugin, which this server does not load/);
      return true;
    });
    assert.equal((await call(w, 'plugin_enable', { name: 'alpha' })).restartRequired, true);
    await w.close();
    w = await target.open({ location, plugins: { known } });
    assert.deepEqual(await call(w, 'alpha_ping'), { plugin: 'alpha', rows: 1, greeting: 'hello' });
    await w.close();
  });

  it('refuses what would not start: core, unknown names, dependencies left behind', async () => {
    const t = trace();
    const known = withProbes(probePlugin('alpha', t), probePlugin('beta', t, { dependsOn: ['alpha'] }));
    const w = await target.open({ plugins: { known } });
    await assert.rejects(call(w, 'plugin_disable', { name: 'core' }), { code: 'forbidden' });
    await assert.rejects(call(w, 'plugin_enable', { name: 'nope' }), { code: 'not_found' });
    await assert.rejects(call(w, 'plugin_disable', { name: 'alpha' }), {
      code: 'conflict',
      message:
        'beta depends on alpha: disable it first, or pass withDependents (--with-dependents) to disable it with it',
    });
    await call(w, 'plugin_disable', { name: 'beta' });
    await call(w, 'plugin_disable', { name: 'alpha' });
    await assert.rejects(call(w, 'plugin_enable', { name: 'beta' }), {
      code: 'conflict',
      message: 'beta depends on alpha: enable it first',
    });
  });

  it('withDependents disables what depends on a plugin, through other plugins too, with it', async () => {
    const t = trace();
    const known = withProbes(
      probePlugin('alpha', t),
      probePlugin('beta', t, { dependsOn: ['alpha'] }),
      probePlugin('gamma', t, { dependsOn: ['beta'] }),
      probePlugin('delta', t),
    );
    const w = await target.open({ plugins: { known } });
    await assert.rejects(
      call(w, 'plugin_disable', { name: 'alpha' }),
      (e: Error & { details?: { dependents: string[] } }) => {
        assert.deepEqual([...(e.details?.dependents ?? [])].sort(), ['beta', 'gamma']);
        return true;
      },
    );
    const off = await call(w, 'plugin_disable', { name: 'alpha', withDependents: true });
    assert.deepEqual(off.alsoDisabled, ['gamma', 'beta']);
    assert.match(off.message, /alpha disabled with gamma, beta; restart/);
    const listed = (await call(w, 'plugin_list')).plugins as Array<{ name: string; enabled: boolean }>;
    const on = (n: string) => listed.find((p) => p.name === n)?.enabled;
    assert.deepEqual([on('alpha'), on('beta'), on('gamma'), on('delta')], [false, false, false, true]);
    await w.close();
  });

  it('checks seeds and settings at start-up, with clear errors', async () => {
    const t = trace();
    const known = withProbes(probePlugin('alpha', t));
    await assert.rejects(
      target.open({ plugins: { known, seed: ['alpah'] } }),
      /no plugin named alpah \(known: alpha\)/,
    );
    await assert.rejects(
      target.open({ plugins: { known, config: { alpha: { greeting: 7 } } } }),
      /invalid input for plugins\.alpha/,
    );
    await assert.rejects(
      target.open({ plugins: { known, config: { omega: {} } } }),
      /plugins\.omega: no plugin/,
    );
    const w = await target.open({ plugins: { known, config: { alpha: { greeting: 'hi' } } } });
    assert.equal((await call(w, 'alpha_ping')).greeting, 'hi');
  });

  it("a plugin's tables survive a disable and its rows are there when it comes back", async () => {
    const t = trace();
    const known = withProbes(probePlugin('alpha', t));
    const location = target.location();
    let w = await target.open({ location, plugins: { known } });
    await call(w, 'alpha_ping', { note: 'kept' });
    await call(w, 'plugin_disable', { name: 'alpha' });
    await w.close();
    w = await target.open({ location, plugins: { known } });
    await call(w, 'plugin_enable', { name: 'alpha' });
    await w.close();
    w = await target.open({ location, plugins: { known } });
    assert.equal((await call(w, 'alpha_ping')).rows, 2, 'the first row, and this one');
  });
});
