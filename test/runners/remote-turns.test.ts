/**
 * How input handed to an agent on a runner is acknowledged, both ends of the wire without it:
 * the server's handle (RemoteAgent) acknowledges as the runner's handle says, and hands a
 * turn-acknowledged agent one batch per turn; the runner (RunnerAgents) tells the server the
 * rule at each turn's start and end, and never reports an idle that would acknowledge input
 * still waiting on the runner (issue 26: at least once, runner agents included).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunnerConnection } from '../../src/plugins/runners/connection.ts';
import { RemoteAgent } from '../../src/plugins/runners/remote-agent.ts';
import { RunnerAgents, type Wire } from '../../src/plugins/runners/runner/agents.ts';
import type { StartContext } from '../../src/plugins/runners/wire.ts';
import type { AgentContext, AgentHandle, AgentInput, AgentSink, Runtime } from '../../src/runtimes/types.ts';

const input = (text: string): AgentInput => ({ messages: [], text });

describe('server: a remote agent', () => {
  const remote = () => {
    const sent: unknown[] = [];
    const conn = { open: true, send: (f: unknown) => sent.push(f) } as unknown as RunnerConnection;
    return { agent: new RemoteAgent(conn, { sessionId: 's1' } as AgentContext), sent };
  };

  it('acknowledged per turn: one batch per turn, ready again at the idle', () => {
    const { agent, sent } = remote();
    agent.started({ acksOnDeliver: false, ready: true });
    assert.equal(agent.ready, true);
    agent.deliver(input('a'));
    assert.equal(sent.length, 1);
    assert.equal(agent.ready, false, 'mid-turn: the next batch waits for the idle');
    agent.reported('busy', false, undefined);
    assert.equal(agent.ready, false);
    agent.reported('idle', false, undefined);
    assert.equal(agent.ready, true);
  });

  it('a command that starts reporting turns: acknowledged on hand-over until then, per turn after', () => {
    const { agent } = remote();
    agent.started({ acksOnDeliver: true, ready: true });
    agent.deliver(input('a'));
    assert.equal(agent.acksOnDeliver, true);
    assert.equal(agent.ready, true, 'no turns: always ready, as a local one');
    agent.reported('idle', false, undefined);
    assert.equal(agent.acksOnDeliver, false, 'its first idle: acknowledged per turn from now on');
    agent.deliver(input('b'));
    assert.equal(agent.ready, false);
  });

  it('started mid-turn (its spawn prompt): not handed input before its first idle', () => {
    const { agent } = remote();
    agent.started({ acksOnDeliver: false, ready: false });
    assert.equal(agent.ready, false);
    agent.reported('idle', undefined, undefined);
    assert.equal(agent.ready, true);
  });

  it('a command that has not yet shown whether it reports turns: not handed input until the runner says ready', () => {
    const { agent } = remote();
    agent.started({ acksOnDeliver: true, ready: false });
    assert.equal(agent.ready, false, 'not yet: its first line may be a startup idle');
    assert.equal(agent.reported('ready', undefined, undefined), true, 'applied: the kernel kicks its pump');
    assert.equal(agent.ready, true);
    assert.equal(agent.acksOnDeliver, true, 'it said nothing of turns: the old rule');
  });

  it('a ready that reached the server before the start was answered counts', () => {
    const { agent } = remote();
    agent.reported('ready', undefined, undefined);
    agent.started({ acksOnDeliver: true, ready: false });
    assert.equal(agent.ready, true);
  });

  it('busy (a turn of its own): not handed input until its idle', () => {
    const { agent } = remote();
    agent.started({ acksOnDeliver: false, ready: true });
    agent.reported('busy', false, undefined);
    assert.equal(agent.ready, false);
    agent.reported('idle', false, undefined);
    assert.equal(agent.ready, true);
  });

  it('an idle of a turn that had not taken the batch in flight is not applied; the next one is', () => {
    const { agent, sent } = remote();
    agent.started({ acksOnDeliver: false, ready: true });
    agent.deliver(input('a'));
    assert.equal((sent[0] as { n: number }).n, 1, 'numbered on the wire');
    assert.equal(agent.reported('idle', false, 1), true);
    agent.deliver(input('b'));
    // The agent ended a turn of its own before b reached it: applying that idle would
    // acknowledge b untaken.
    assert.equal(agent.reported('idle', false, 1), false);
    assert.equal(agent.ready, false);
    assert.equal(agent.reported('idle', false, 2), true);
    assert.equal(agent.ready, true);
  });

  it('its first idle came before the start answer (that said not ready): ready', () => {
    const { agent } = remote();
    agent.reported('idle', undefined, undefined);
    agent.started({ acksOnDeliver: false, ready: false });
    assert.equal(agent.ready, true);
  });

  it('an older runner, which says nothing of readiness or the rule: ready, its start answer kept', () => {
    const { agent } = remote();
    agent.started({ acksOnDeliver: false });
    assert.equal(agent.ready, true);
    agent.reported('idle', undefined, undefined);
    assert.equal(agent.acksOnDeliver, false);
  });
});

/** A handle whose turns the test drives: `sink` is its context's. */
class TurnHandle implements AgentHandle {
  ready = true;
  readonly acksOnDeliver = false;
  readonly took: string[] = [];
  constructor(readonly sink: AgentSink) {}
  deliver(i: AgentInput): void {
    this.ready = false;
    this.took.push(i.text);
  }
  /** The turn ends: at a safe point, it says so. */
  idle(): void {
    this.ready = true;
    void this.sink.idle();
  }
  async stop(): Promise<void> {}
}

/** A runner's agents with one runtime of TurnHandles (`handles`, in start order), its frames recorded; `sc` starts session s1. */
function runnerRig() {
  const handles: TurnHandle[] = [];
  const runtime: Runtime = {
    name: 'turns',
    validate: () => {},
    start: async (ctx) => {
      const h = new TurnHandle(ctx.sink);
      handles.push(h);
      return h;
    },
  };
  const frames: Array<Record<string, unknown>> = [];
  const wire: Wire = {
    request: async (f) => void frames.push(f),
    send: (f) => frames.push(f),
    url: () => 'http://127.0.0.1:9',
  };
  const agents = new RunnerAgents(new Map([['turns', runtime]]), 'test-turns', null, wire);
  const sc = {
    sessionId: 's1',
    spec: { prompt: null, config: {}, cwd: null, model: null, env: {} },
  } as unknown as StartContext;
  return { agents, handles, frames, sc };
}

describe('runner: its agents’ turns', () => {
  it('an idle with input waiting here is not reported: the input is handed over, the turn goes on', async () => {
    const { agents, handles, frames, sc } = runnerRig();
    assert.deepEqual(await agents.start('turns', sc), { acksOnDeliver: false, ready: true });
    const h = handles[0]!;
    const idles = () => frames.filter((f) => f.method === 'idle');

    agents.deliver('s1', input('a'));
    assert.deepEqual(h.took, ['a']);
    // Mid-turn, more arrives (the agent's own turn, or an older server): it waits here.
    agents.deliver('s1', input('b'));
    assert.deepEqual(h.took, ['a']);
    h.idle();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(h.took, ['a', 'b'], 'handed over at the safe point');
    assert.deepEqual(idles(), [], 'that idle would have acknowledged b before any turn took it');
    h.idle();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      idles().map((f) => [f.acks, f.took]),
      [[false, undefined]],
      'the turn that took b ended: reported, with the rule (no numbers from this server)',
    );
    // A server that numbers its batches is told which one the ending turn had taken.
    agents.deliver('s1', input('c'), 7);
    h.idle();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(idles().at(-1)?.took, 7);
    await agents.stopAll();
  });

  it("a stopped agent's late reports are not sent: the session's next agent here is not told its turn ended", async () => {
    const { agents, handles, frames, sc } = runnerRig();
    await agents.start('turns', sc);
    const first = handles[0]!;
    agents.deliver('s1', input('a'), 1);
    // The connection dropped (its agents are stopped), the runner came back and the server
    // started the session again here, handing the new agent what the first had not finished.
    await agents.stop('s1');
    await agents.start('turns', sc);
    agents.deliver('s1', input('a'), 1);
    assert.deepEqual(handles[1]!.took, ['a']);
    const before = frames.length;
    // The first agent's idle, read from its pipe only now.
    first.idle();
    await first.sink.output('late words');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(frames.slice(before), [], 'nothing reported under the session: it is not its agent now');
    // The new agent's own idle still goes out.
    handles[1]!.idle();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      frames.slice(before).map((f) => f.method),
      ['idle'],
    );
    await agents.stopAll();
  });
});
