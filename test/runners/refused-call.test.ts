import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RunnerAgents, type Wire } from '../../src/plugins/runners/runner/agents.ts';
import type { StartContext } from '../../src/plugins/runners/wire.ts';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import { WarrenError } from '../../src/vocab/errors.ts';
import { within } from '../crash/harness.ts';

/**
 * A runner's agents when their node no longer has them (it was fenced, or moved the session
 * away, between a frame and the next): every call and report is refused with `forbidden:
 * session … does not run on this runner` (issue 26 item 3). The agent ends, reporting its
 * exit; nothing becomes an unhandled rejection, which would end the `warren runner` process
 * and every agent it holds. The runner's real agent host and script runtime; the wire refuses
 * as the server does.
 */
describe('runner: a refused call never crashes the runner', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const runtime = new ScriptRuntime();
  before(() => process.on('unhandledRejection', onUnhandled));
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await runtime.close();
  });

  /** A wire whose server forgot every session: requests are refused, one-way frames recorded. */
  const refusingWire = () => {
    const sent: Array<Record<string, unknown>> = [];
    const refused: string[] = [];
    const wire: Wire = {
      request: async (frame) => {
        refused.push(`${frame.t}:${String(frame.method ?? frame.name)}`);
        throw new WarrenError('forbidden', `session ${String(frame.session)} does not run on this runner`);
      },
      send: (frame) => sent.push(frame),
      url: () => 'http://127.0.0.1:9',
    };
    return { wire, sent, refused };
  };

  const ctxOf = (id: string, steps: unknown[]): StartContext => ({
    sessionId: id,
    zone: 'default',
    depth: 0,
    title: null,
    spec: { prompt: null, config: { script: { steps } }, cwd: null, model: null, env: {} },
    token: 't',
    tools: [],
    resumeState: null,
  });

  /** The agent's exit frame, once it was sent; and a turn of the loop for late rejections. */
  const exitOf = async (sent: Array<Record<string, unknown>>, id: string) => {
    let exit: Record<string, unknown> | undefined;
    await within(10_000, `${id} reported its exit`, () => {
      exit = sent.find((f) => f.session === id && f.method === 'exit');
      return exit !== undefined;
    });
    await new Promise((r) => setImmediate(r));
    return (exit!.args as Array<{ reason: string }>)[0]!;
  };

  it('a refused syscall ends the script agent, reported, with no unhandled rejection', async () => {
    const { wire, sent, refused } = refusingWire();
    const agents = new RunnerAgents(new Map([['script', runtime]]), 'test-refused', null, wire);
    await agents.start('script', ctxOf('s_call', [{ reply: 'hello' }]));
    const exit = await exitOf(sent, 's_call');
    assert.equal(exit.reason, 'crashed');
    assert.ok(refused.includes('call:ipc_write'), `the call was refused: ${refused}`);
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
    await agents.stopAll();
  });

  it('a listener whose input report and answer are refused ends, with no unhandled rejection', async () => {
    const { wire, sent, refused } = refusingWire();
    const agents = new RunnerAgents(new Map([['script', runtime]]), 'test-refused', null, wire);
    await agents.start('script', ctxOf('s_listen', [{ listen: { say: 'got ${input.text}' } }]));
    // Input arrives (sent before the node forgot the session): its event report is refused.
    await within(10_000, 'the listener waits for input', () => refused.includes('sink:idle'));
    agents.deliver('s_listen', { messages: [], text: 'one' });
    await within(10_000, 'its answer refused', () => refused.includes('sink:output'));
    agents.deliver('s_listen', { messages: [], text: 'two' });
    const exit = await exitOf(sent, 's_listen');
    assert.equal(exit.reason, 'crashed');
    assert.ok(refused.includes('sink:event'), `the input's event was refused: ${refused}`);
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
    await agents.stopAll();
  });
});
