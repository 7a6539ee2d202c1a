/**
 * An agent's own message on one of its async fds (its reply on its pipe, its line in a room)
 * is not handed back to it, and once nothing before it there is due it is acknowledged. A
 * cursor is one number: acknowledged at once, the reply moved the cursor past a message that
 * came mid-turn (committed before the reply, handed over after the turn) and past the turn's
 * own input, so the first was never handed over and the second not again after a crash (the
 * fault suite's unanswered send: written 3 ms after the echo agent's turn began, skipped).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Delivery } from '../../src/kernel/delivery.ts';
import type { AgentHandle, AgentInput } from '../../src/runtimes/types.ts';
import { deliveryRig, idleReported, streamMessage as message } from '../helpers/delivery-rig.ts';

const ME = 'ses_a';
const rig = (backlog: ReturnType<typeof message>[] = []) => deliveryRig({ holder: ME, backlog });

/** An agent that reports turns: not ready from a hand-over until its turn ends. */
function agent() {
  const handed: number[][] = [];
  let inTurn = false;
  const h: AgentHandle = {
    get ready() {
      return !inTurn;
    },
    acksOnDeliver: false,
    deliver: (i: AgentInput) => {
      inTurn = true;
      handed.push(i.messages.map((m) => m.seq));
    },
    stop: async () => {},
  };
  return { h, handed, endTurn: () => (inTurn = false) };
}

/** The agent ends its turn and says so. */
function idle(delivery: Delivery, a: ReturnType<typeof agent>): void {
  a.endTurn();
  idleReported(delivery, ME);
}

it('a message that came mid-turn, before the agent’s reply, is handed over after the turn', async () => {
  const { delivery } = rig();
  const a = agent();
  await delivery.attach(ME, a.h);
  delivery.onCommit([message(5, 'operator:admin')]);
  assert.deepEqual(a.handed, [[5]]);
  delivery.onCommit([message(6, 'operator:admin')]); // mid-turn: waits
  delivery.onCommit([message(7, ME)]); // the reply to 5
  idle(delivery, a);
  assert.deepEqual(a.handed, [[5], [6]], 'the message that came mid-turn');
});

it('the agent’s reply does not acknowledge the input of the turn it is in', async () => {
  const { delivery, fdTable } = rig();
  const a = agent();
  await delivery.attach(ME, a.h);
  delivery.onCommit([message(5, 'operator:admin')]);
  delivery.onCommit([message(7, ME)]);
  assert.equal(fdTable.acked('f1'), 0, 'the turn has not ended');
  idle(delivery, a);
  assert.equal(fdTable.acked('f1'), 7, 'the turn ended: its input and the reply after it');
});

it('an agent started again is handed what came before its last agent’s reply and was never handed over', async () => {
  const backlog = [message(5, 'operator:admin'), message(6, 'operator:admin'), message(7, ME)];
  const { delivery } = rig(backlog);
  const a = agent();
  await delivery.attach(ME, a.h);
  assert.deepEqual(a.handed, [[5, 6]], 'both due, the reply skipped');
});

it('a reply made while a turn’s end is recorded, the record lost: that turn’s input is handed again to the next agent', async () => {
  const backlog = [message(5, 'operator:admin'), message(7, ME)];
  const { delivery, fdTable } = rig(backlog);
  const a = agent();
  await delivery.attach(ME, a.h);
  delivery.onCommit([message(5, 'operator:admin')]);
  assert.deepEqual(a.handed, [[5]]);
  a.endTurn();
  const took = delivery.turnEnding(ME);
  delivery.onCommit([message(7, ME)]); // committed before the idle is
  delivery.turnRecorded(ME, new Map()); // the idle's record failed (reports.ts: turnLost)
  assert.equal(fdTable.acked('f1'), 0, `not acknowledged (the turn took ${[...took]})`);
  delivery.detach(ME);
  const b = agent();
  await delivery.attach(ME, b.h);
  assert.deepEqual(b.handed, [[5]], 'handed again');
});

/**
 * In a cluster every node sees every commit; only the node that runs the agent has its pump.
 * Another node once acknowledged the agent's reply on its own copy of the cursor, and when it
 * took the session over (its first node paused or cut off) it took that cursor up: the messages
 * before the reply that the first agent was handed but never finished were skipped (the fault
 * suite's unanswered sends 4 and 5, handed together, then the node lost).
 */
it('a node that does not run the agent leaves its reply unacknowledged: a takeover there is handed what came before it', async () => {
  const backlog = [message(5, 'operator:admin'), message(6, 'operator:admin'), message(7, ME)];
  const { delivery, fdTable } = rig(backlog);
  delivery.onCommit([message(5, 'operator:admin'), message(6, 'operator:admin')]);
  delivery.onCommit([message(7, ME)]); // the reply, written through the agent's own node
  assert.equal(fdTable.acked('f1'), 0, 'not this node’s to acknowledge');
  const a = agent();
  await delivery.attach(ME, a.h);
  assert.deepEqual(a.handed, [[5, 6]], 'the session taken over here: both handed again');
});
