/**
 * Where no confinement is available (`containment: auto` without bubblewrap), agents that can
 * run shell commands are refused at spawn; agents that cannot (script, claude-code without
 * Bash) still start; `containment: none` lets everything start, unconfined. Runs everywhere.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ContainmentState,
  checkNetworkAsk,
  type SessionNetwork,
  sessionContainment,
} from '../../src/kernel/containment.ts';
import { builtinRuntimes } from '../../src/runtimes/registry.ts';
import type { AgentSpec } from '../../src/runtimes/types.ts';
import { WarrenError } from '../../src/vocab/errors.ts';

const runtimes = builtinRuntimes();
const spec = (config: Record<string, unknown> = {}): AgentSpec => ({
  prompt: null,
  config,
  cwd: null,
  model: null,
  env: {},
});
const unavailable: ContainmentState = {
  setting: 'auto',
  inForce: 'unavailable',
  bwrap: null,
  reason: 'bubblewrap (bwrap) is not installed',
};
const none: ContainmentState = { setting: 'none', inForce: 'none', bwrap: null, reason: 'containment: none' };
const bwrap: ContainmentState = { setting: 'auto', inForce: 'bwrap', bwrap: '/usr/bin/bwrap', reason: null };
const fullNet = { granted: null, node: 'full' } as const;
const decide = (state: ContainmentState, runtime: string, s = spec()) =>
  sessionContainment(state, 'local', runtimes.get(runtime)!, s, fullNet);

describe('containment where none is available', () => {
  it('refuses command, acp, codex and claude-code with Bash, naming the way out', () => {
    for (const [rt, s] of [
      ['command', spec()],
      ['acp', spec()],
      ['codex', spec()],
      ['claude-code', spec()],
      ['claude-code', spec({ tools: ['Read', 'Bash'] })],
    ] as const) {
      assert.throws(
        () => decide(unavailable, rt, s),
        (e: unknown) =>
          e instanceof WarrenError && e.code === 'unavailable' && /containment: none/.test(e.message),
        rt,
      );
    }
  });

  it('starts script and claude-code without Bash, and says they are not confined', () => {
    assert.deepEqual(decide(unavailable, 'script'), { mode: 'in-process' });
    assert.deepEqual(decide(unavailable, 'claude-code', spec({ tools: ['Read', 'Edit'] })), { mode: 'none' });
  });

  it('with containment: none, starts them all unconfined; with bwrap, confines the process runtimes', () => {
    for (const rt of ['command', 'acp', 'codex', 'claude-code']) {
      assert.deepEqual(decide(none, rt), { mode: 'none' });
      assert.deepEqual(decide(bwrap, rt), { mode: 'bwrap', network: 'full' });
    }
    assert.deepEqual(decide(bwrap, 'script'), { mode: 'in-process' });
    assert.deepEqual(sessionContainment(bwrap, 'gpu-box', runtimes.get('command')!, spec(), fullNet), {
      mode: 'remote',
    });
  });
});

describe('network per grant', () => {
  const command = runtimes.get('command')!;
  const net = (granted: 'full' | 'none' | null, node: 'full' | 'none'): SessionNetwork => ({ granted, node });
  const refusedNone = (e: unknown) =>
    e instanceof WarrenError && e.code === 'unavailable' && /network none/.test(e.message);

  it('a confined agent gets its grant within the node setting: the default when it has none, never more', () => {
    const on = (granted: 'full' | 'none' | null, node: 'full' | 'none') =>
      sessionContainment(bwrap, 'local', command, spec(), net(granted, node));
    assert.deepEqual(on(null, 'full'), { mode: 'bwrap', network: 'full' });
    assert.deepEqual(on(null, 'none'), { mode: 'bwrap', network: 'none' });
    assert.deepEqual(on('none', 'full'), { mode: 'bwrap', network: 'none' });
    assert.deepEqual(on('full', 'full'), { mode: 'bwrap', network: 'full' });
    assert.deepEqual(on('full', 'none'), { mode: 'bwrap', network: 'none' }, 'an inherited full is narrowed');
  });

  it('network none is refused where nothing would hold the agent to it (unconfined, remote)', () => {
    assert.throws(() => sessionContainment(none, 'local', command, spec(), net('none', 'full')), refusedNone);
    assert.throws(
      () => sessionContainment(bwrap, 'gpu-box', command, spec(), net('none', 'full')),
      refusedNone,
    );
    // An in-process script has no process to confine: it holds the grant for its children.
    assert.deepEqual(
      sessionContainment(none, 'local', runtimes.get('script')!, spec(), net('none', 'full')),
      {
        mode: 'in-process',
      },
    );
  });

  it('asking for full where the node gives none is refused', () => {
    assert.throws(
      () => checkNetworkAsk('full', 'none'),
      (e: unknown) =>
        e instanceof WarrenError && e.code === 'forbidden' && /containmentNetwork: none/.test(e.message),
    );
    checkNetworkAsk('none', 'none');
    checkNetworkAsk('full', 'full');
    checkNetworkAsk(undefined, 'none');
  });
});
