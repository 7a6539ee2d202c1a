/**
 * A `command` agent that reports turns (`{"warren":"idle"}` / `busy`) has its input counted
 * as taken at the idle that ends each turn, one batch per turn, rather than once written to
 * its stdin (issue 26: an echo agent ended by a fence mid-turn lost the message it was
 * handed). One that never reports turns keeps the old rule. A new command is handed nothing
 * until it has shown which it is (its first idle or busy, or QUIET_START_MS without one): a batch
 * handed before its startup idle was read was acknowledged at once, and every later idle then
 * acknowledged the batch after the one it had finished (the fault suite's unanswered sends).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { Delivery } from '../../src/kernel/delivery.ts';
import { CommandAgent } from '../../src/runtimes/command/agent.ts';
import { CommandRuntime } from '../../src/runtimes/command/index.ts';
import type { AgentContext, AgentHandle, AgentSink } from '../../src/runtimes/types.ts';
import { heldClock } from '../helpers/clock.ts';
import { deliveryRig, idleReported, streamMessage } from '../helpers/delivery-rig.ts';

const input = { messages: [], text: 'hi' };
const dir = mkdtempSync(join(tmpdir(), 'warren-command-turns-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(ok(), what);
};

/** A CommandAgent over `node -e script`, its reports recorded, its quiet-start timer held. */
function agent(
  script: string,
  sink?: Partial<AgentSink>,
  env: Record<string, string> = {},
  declared?: boolean,
) {
  const reports: string[] = [];
  const outputs: string[] = [];
  const clock = heldClock();
  const record = new Proxy(
    {},
    {
      get: (_t, name) => (arg: unknown) => {
        reports.push(String(name));
        if (name === 'output') outputs.push(String(arg));
        const own = sink?.[name as keyof AgentSink] as ((a: unknown) => unknown) | undefined;
        return own ? own(arg) : Promise.resolve();
      },
    },
  );
  // Its own process group, as the runtime starts one: `stop()` ends the group.
  const child = spawn(process.execPath, ['-e', script], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    detached: true,
  });
  const a = new CommandAgent(
    { sink: record, clock, sessionId: 'ses_a' } as unknown as AgentContext,
    child,
    'node',
    declared,
  );
  const reported = (n: number) => until(`${n} reports (${reports})`, () => reports.length >= n);
  return { a, reports, outputs, clock, reported };
}

/**
 * A CommandAgent over `script`, attached as session `ses_a`'s agent to `delivery`, with the
 * kernel's reports as far as delivery goes (an idle ends the turn and acknowledges what it took,
 * a `ready` is a safe point); `handed`: the seqs of each batch it was handed.
 */
async function attached(delivery: Delivery, script: string, env: Record<string, string>) {
  const x = agent(
    script,
    { idle: async () => idleReported(delivery, 'ses_a'), ready: () => delivery.safePoint('ses_a') },
    env,
  );
  const handed: number[][] = [];
  const h: AgentHandle = {
    get ready() {
      return x.a.ready;
    },
    get acksOnDeliver() {
      return x.a.acksOnDeliver;
    },
    deliver: (i) => {
      handed.push(i.messages.map((m) => m.seq));
      x.a.deliver(i);
    },
    stop: () => x.a.stop(),
  };
  await delivery.attach('ses_a', h);
  return { ...x, handed };
}

it('one that reports turns: not ready until its first idle, nor mid-turn; its input acknowledged at the idle', async () => {
  const { a, reports, reported } = agent(
    `const say = (o) => console.log(JSON.stringify(o)); say({ warren: 'idle' });
     process.stdin.on('data', () => { say({ warren: 'busy' }); setTimeout(() => say({ warren: 'idle' }), 100); });`,
  );
  try {
    assert.equal(a.ready, false, 'before it says anything: not ready');
    assert.equal(a.acksOnDeliver, true, 'and not known to report turns');
    await reported(1);
    assert.deepEqual(reports, ['idle']);
    assert.equal(a.acksOnDeliver, false, 'it reports turns: acknowledged at their end');
    assert.equal(a.ready, true);
    a.deliver(input);
    assert.equal(a.ready, false, 'mid-turn: the next batch waits for the idle');
    await reported(3);
    assert.deepEqual(reports, ['idle', 'busy', 'idle']);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});

it('one that says busy first (a turn of its own) is not ready until that turn ends', async () => {
  const { a, reports, reported } = agent(
    `const say = (o) => console.log(JSON.stringify(o)); say({ warren: 'busy' });
     setTimeout(() => say({ warren: 'idle' }), 300); process.stdin.resume();`,
  );
  try {
    await reported(1);
    assert.deepEqual(reports, ['busy']);
    assert.equal(a.ready, false, 'in its own turn');
    await reported(2);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});

it('one that never reports turns and says nothing: ready once its quiet start is over; input counts as taken once written', async () => {
  const { a, reports, clock } = agent(`process.stdin.resume(); setTimeout(() => {}, 60_000);`);
  try {
    assert.equal(a.ready, false, 'not yet: it may still say idle');
    assert.equal(clock.fire(), 1, 'its quiet-start timer');
    assert.deepEqual(reports, ['ready'], 'the kernel is told it can take input');
    assert.equal(a.ready, true);
    a.deliver(input);
    assert.equal(a.acksOnDeliver, true);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});

it('one that prints a banner before its idle: still not ready until the idle', async () => {
  const { a, reports, clock, reported } = agent(
    `console.log('pid ' + process.pid); setTimeout(() => console.log(JSON.stringify({ warren: 'idle' })), 300);
     process.stdin.resume();`,
  );
  try {
    await reported(1);
    assert.deepEqual(reports, ['output']);
    assert.equal(a.ready, false, 'a banner says nothing of turns');
    await reported(2);
    assert.deepEqual(reports, ['output', 'idle']);
    assert.equal(a.ready, true);
    assert.equal(a.acksOnDeliver, false);
    assert.equal(clock.fire(), 0, 'its quiet-start timer was cleared');
  } finally {
    await a.stop();
  }
});

/**
 * The kernel's delivery over real command agents: a message due when the session's agent starts
 * (a session taken over with a backlog), the agent slow to say its first idle (a loaded
 * machine: here it waits for a file). Handed only after that idle, as a turn; the agent ends
 * mid-turn; the session's next agent is handed the message again.
 */
it('a batch due while the agent starts is handed after its first idle, and again if that turn never ends', async () => {
  const gate = join(dir, 'go');
  const script = `const fs = require('node:fs'); const say = (o) => console.log(JSON.stringify(o));
    const start = () => {
      say({ warren: 'idle' });
      process.stdin.on('data', (d) => { say({ warren: 'busy' }); console.log('took ' + JSON.parse(d).messages.map((m) => m.seq)); });
    };
    const wait = () => (fs.existsSync(process.env.GATE) ? start() : setTimeout(wait, 10)); wait();`;
  const clock = heldClock();
  const { delivery } = deliveryRig({
    holder: 'ses_a',
    backlog: [streamMessage(7, 'operator:admin')],
    clock,
  });
  const started = () => attached(delivery, script, { GATE: gate });

  const first = await started();
  try {
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(first.handed, [], 'nothing handed before its first idle');
    writeFileSync(gate, '');
    await until('the first agent took the message', () => first.outputs.includes('took 7'));
    assert.deepEqual(first.reports.slice(0, 2), ['idle', 'busy']);
  } finally {
    await first.a.stop();
  }
  // It ended mid-turn (a fence, a paused node's watcher): the session's next agent.
  delivery.detach('ses_a');
  const second = await started();
  try {
    await until('the next agent took it again', () => second.outputs.includes('took 7'));
    assert.deepEqual(second.handed, [[7]]);
  } finally {
    await second.a.stop();
  }
});

/**
 * A command slower to start than its quiet start (a loaded machine; here it waits for a file):
 * the batch due is handed when the quiet start runs out, taken as written. Its startup idle then
 * comes late, and the idle that ends that first batch's turn comes after it: a message that
 * arrived meanwhile is handed only then. Handed at the startup idle, that idle of the first
 * batch would have ended its turn and acknowledged it, unread, for good: the agent ended in the
 * middle of it (the fault suite's kills), and nobody was handed it again.
 */
it('a command whose startup idle comes after its quiet start: the idle it owes is not taken for the next batch', async () => {
  const gate = join(dir, 'late');
  const script = `const fs = require('node:fs'); const say = (o) => console.log(JSON.stringify(o));
    const read = () => {
      require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
        const seqs = JSON.parse(l).messages.map((m) => m.seq);
        say({ warren: 'busy' });
        console.log('took ' + seqs);
        if (!seqs.includes(8)) setTimeout(() => say({ warren: 'idle' }), 50); // 8: it ends mid-turn
      });
    };
    const start = () => { say({ warren: 'idle' }); readLater(); };
    const readLater = () => (fs.existsSync(process.env.GATE + '2') ? read() : setTimeout(readLater, 10));
    const wait = () => (fs.existsSync(process.env.GATE) ? start() : setTimeout(wait, 10)); wait();`;
  const clock = heldClock();
  const backlog = [streamMessage(7, 'operator:admin')];
  const { delivery } = deliveryRig({ holder: 'ses_a', backlog, clock });
  const started = () => attached(delivery, script, { GATE: gate });

  const first = await started();
  try {
    assert.equal(first.clock.fire(), 1, 'its quiet start runs out before it says anything');
    assert.deepEqual(first.handed, [[7]], 'the batch due, taken as written');
    writeFileSync(gate, '');
    await until('its startup idle', () => first.reports.includes('idle'));
    const m8 = streamMessage(8, 'operator:admin');
    backlog.push(m8);
    delivery.onCommit([m8]);
    assert.deepEqual(first.handed, [[7]], 'not handed while it still owes the idle of 7');
    writeFileSync(`${gate}2`, ''); // now it reads its input
    await until('8 handed after 7 was done', () => first.outputs.includes('took 8'));
    assert.deepEqual(first.outputs, ['took 7', 'took 8']);
    assert.deepEqual(first.handed, [[7], [8]]);
  } finally {
    await first.a.stop();
  }
  delivery.detach('ses_a');
  const second = await started();
  try {
    await until('the next agent took 8 again', () => second.outputs.includes('took 8'));
    assert.deepEqual(second.handed, [[8]], 'the batch whose turn never ended, and not 7 (taken as written)');
  } finally {
    await second.a.stop();
  }
});

it('one that owes an idle it never says (no startup idle) is handed input again after OWED_IDLE_MS', async () => {
  const { a, reports, clock, reported } = agent(
    `const say = (o) => console.log(JSON.stringify(o));
     process.stdin.once('data', () => { say({ warren: 'busy' }); setTimeout(() => say({ warren: 'idle' }), 50); });`,
  );
  try {
    assert.equal(clock.fire(), 1, 'its quiet start');
    a.deliver(input);
    await reported(3);
    assert.deepEqual(reports, ['ready', 'busy', 'idle']);
    assert.equal(a.ready, false, 'that idle is taken for its startup one: it still owes one');
    assert.equal(clock.fire(), 1, 'the wait for it');
    assert.deepEqual(reports, ['ready', 'busy', 'idle', 'ready']);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});

it('stopped, its turn reports are not passed on: read late, they would end the session’s next agent’s turn', async () => {
  const { a, reports, outputs, reported } = agent(
    `const say = (o) => console.log(JSON.stringify(o));
     process.on('SIGTERM', () => { say({ warren: 'busy' }); say({ warren: 'idle' }); console.log('bye');
       setTimeout(() => process.exit(0), 50); });
     say({ warren: 'idle' }); process.stdin.resume();`,
  );
  await reported(1);
  await a.stop();
  await until('its last words read', () => outputs.includes('bye'));
  assert.deepEqual(reports, ['idle', 'output'], 'its output is kept; its busy and idle are not reported');
});

it('config.turns: true — nothing is handed before its startup idle, however slowly it starts (no quiet start)', async () => {
  const { a, reports, clock, reported } = agent(
    `setTimeout(() => console.log(JSON.stringify({ warren: 'idle' })), 300); process.stdin.resume();`,
    undefined,
    {},
    true,
  );
  try {
    assert.equal(clock.fire(), 0, 'no quiet-start timer: its slowness does not make it ready');
    assert.equal(a.ready, false);
    assert.equal(a.acksOnDeliver, false, 'acknowledged per turn from the start');
    await reported(1);
    assert.deepEqual(reports, ['idle']);
    assert.equal(a.ready, true);
    a.deliver(input);
    assert.equal(a.ready, false, 'one batch per turn');
  } finally {
    await a.stop();
  }
});

it('config.turns: false — ready at once, its input taken as written', async () => {
  const { a, clock } = agent(`process.stdin.resume(); setTimeout(() => {}, 60_000);`, undefined, {}, false);
  try {
    assert.equal(a.ready, true, 'no quiet start to wait out');
    assert.equal(clock.fire(), 0);
    assert.equal(a.acksOnDeliver, true);
  } finally {
    await a.stop();
  }
});

it('config.turns must be a boolean: anything else is refused at spawn, naming the key', () => {
  const spec = {
    prompt: null,
    cwd: null,
    model: null,
    env: {},
    config: { command: process.execPath, turns: 'yes' },
  };
  assert.throws(
    () => new CommandRuntime().validate(spec),
    (e: Error & { code?: string }) => e.code === 'invalid_input' && /turns/.test(e.message),
  );
  new CommandRuntime().validate({ ...spec, config: { command: process.execPath, turns: true } });
});
