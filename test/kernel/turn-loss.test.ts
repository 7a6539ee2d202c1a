/**
 * Input is acknowledged only when the turn that took it was recorded, answer and all (issue 26:
 * a listener's answer refused while PostgreSQL restarted, its idle recorded after, and the
 * acknowledged send never answered): a turn whose output could not be recorded leaves its
 * input unacknowledged, and the session's next agent in this node's life is handed it again.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Core } from '../../src/kernel/core.ts';
import type { Delivery } from '../../src/kernel/delivery.ts';
import { soloNode } from '../../src/kernel/node.ts';
import { agentSink, type ReportQueue } from '../../src/kernel/reports.ts';
import type { AgentHandle, AgentInput } from '../../src/runtimes/types.ts';
import type { SessionsTable } from '../../src/store/schema.ts';
import { deliveryRig, streamMessage } from '../helpers/delivery-rig.ts';

const log = { error() {}, warn() {}, info() {}, debug() {} };
const row = { id: 'ses_a', zone: 'default', status: 'running' } as SessionsTable;
const hooks = { forget() {}, finish() {}, fenced() {}, runId: 'run_test' };

/** A report queue that refuses the reports `refuse` picks (in call order) and records the rest. */
const queue = (refuse: (n: number) => boolean) => {
  let n = 0;
  return {
    apply: () => (refuse(n++) ? Promise.reject(new Error('database unreachable')) : Promise.resolve()),
  } as unknown as ReportQueue;
};

/** A delivery that hands over one message (fd f1 up to seq 7) per turn and records acknowledgements. */
const fakeDelivery = () => {
  const acked: Array<Map<string, number>> = [];
  const d = {
    turnEnding: () => new Map([['f1', 7]]),
    turnRecorded: (_id: string, consumed: Map<string, number>) => acked.push(consumed),
    safePoint() {},
    inputRecord: (_id: string, p: Record<string, unknown>) => p,
  } as unknown as Delivery;
  return { d, acked };
};

const core = { log, node: soloNode('test') } as unknown as Core;
const settle = () => new Promise((r) => setTimeout(r, 10));

it('a turn whose output was refused does not acknowledge its input; the next turn does', async () => {
  const { d, acked } = fakeDelivery();
  // busy, output (refused), idle; then busy, output, idle.
  const sink = agentSink(
    core,
    queue((n) => n === 1),
    d,
    hooks,
    row,
  );
  void sink.busy();
  void sink.output('heard it').catch(() => {});
  await sink.idle();
  await settle();
  void sink.busy();
  void sink.output('heard the next');
  await sink.idle();
  assert.deepEqual(
    acked.map((m) => [...m]),
    [[], [['f1', 7]]],
    'nothing acknowledged for the lost turn, the next one acknowledged',
  );
});

it('an agent started again is handed what the previous one took and never acknowledged', async () => {
  const { delivery } = deliveryRig({ holder: 'ses_a', backlog: [streamMessage(7, 'operator:admin')] });
  const handle = () => {
    const got: AgentInput[] = [];
    const h: AgentHandle = { ready: true, deliver: (i) => void got.push(i), stop: async () => {} };
    return { h, got };
  };
  const first = handle();
  await delivery.attach('ses_a', first.h);
  assert.deepEqual(
    first.got.map((i) => i.messages.map((m) => m.seq)),
    [[7]],
  );
  // Its turn never ended (its node fenced mid-turn); the node starts the session's agent again.
  delivery.detach('ses_a');
  const second = handle();
  await delivery.attach('ses_a', second.h);
  assert.deepEqual(
    second.got.map((i) => i.messages.map((m) => m.seq)),
    [[7]],
    'handed again',
  );
});

it('an agent whose reports were fenced acknowledges nothing more, even once its node owns the session again', async () => {
  const { d, acked } = fakeDelivery();
  // A node of a cluster at epoch 2. Its first turn's reports find the row under epoch 1 (its
  // lease lapsed while PostgreSQL was down): each is dropped, and resolves. Then the node takes
  // the session again: the next turn's reports are recorded.
  const node = { ...soloNode('n1'), clustered: true, epoch: 2 };
  const stale = { ...row, owner_node: 'n1', owner_epoch: 1 } as SessionsTable;
  let n = 0;
  let fences = 0;
  const reports = {
    apply: (_id: string, fn: (tx: unknown, r: SessionsTable) => Promise<unknown>) =>
      n++ < 3 ? fn({}, stale).then(() => {}) : Promise.resolve(),
  } as unknown as ReportQueue;
  const sink = agentSink(
    { log, node } as unknown as Core,
    reports,
    d,
    {
      ...hooks,
      fenced: () => {
        fences++;
      },
    },
    row,
  );
  void sink.busy();
  await sink.output('heard it');
  await sink.idle();
  assert.equal(fences, 3, 'each dropped report said so');
  void sink.busy();
  await sink.output('heard the next');
  await sink.idle();
  assert.deepEqual(
    acked.map((m) => [...m]),
    [[], []],
    'an answer was dropped: what either turn took is for the next agent',
  );
});
