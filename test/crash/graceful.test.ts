import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { alive, Node, within } from './harness.ts';

/**
 * `kill --graceful` on a real server: an agent that takes the [SIGTERM], replies and ends its
 * turn is `terminated` at once, not at the end of the grace period; one that keeps working
 * past it is SIGKILLed at the deadline and recorded `killed`.
 */

const GRACE_MS = 3000;

/** Reports idle, and after a [SIGTERM] says goodbye and ends its turn; exits 0 when its input closes. */
const REPLIER = [
  'sh',
  '-c',
  `echo '{"warren":"idle"}'
while read -r line; do
  echo '{"warren":"busy"}'
  case "$line" in *SIGTERM*) echo 'wrapping up' ;; esac
  echo '{"warren":"idle"}'
done`,
];

/** Takes its input and keeps working: never ends its turn, ignores SIGTERM. */
const IGNORER = [
  'sh',
  '-c',
  `trap '' TERM
echo '{"warren":"idle"}'
while read -r line; do echo '{"warren":"busy"}'; echo 'still working'; done
sleep 1000`,
];

forEachStore('graceful stop', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('ends an agent that replies and goes idle as terminated at once; escalates one that keeps working', async () => {
    const node = new Node(target, { kernel: { termGraceMs: GRACE_MS } });
    nodes.push(node);
    const s = await node.start();
    const spawn = async (command: string[], title: string) =>
      (
        await s.api<{ session: { id: string } }>('POST', '/v1/sessions', {
          runtime: 'command',
          command,
          title,
        })
      ).session.id;
    const polite = await spawn(REPLIER, 'polite');
    const stubborn = await spawn(IGNORER, 'stubborn');
    for (const id of [polite, stubborn]) await s.until(id, (x) => x.status === 'idle');
    const recs = await node.records();
    const pidOf = (id: string) => recs.find((r) => r.session_id === id)!.pid;

    const t0 = Date.now();
    const k = await s.api<{ signal: string; deadline: number }>('POST', `/v1/sessions/${polite}/kill`, {
      graceful: true,
    });
    assert.equal(k.signal, 'SIGTERM');
    const done = await s.until(polite, (x) => x.status === 'stopped', GRACE_MS * 3);
    const took = Date.now() - t0;
    console.log(`# a polite agent ended ${took} ms after SIGTERM (grace ${GRACE_MS} ms)`);
    assert.equal(done.endReason, 'terminated', JSON.stringify(done));
    assert.equal(done.lastMessage, 'wrapping up');
    // At once, not at the deadline: the kernel never escalated (an escalation is a SIGKILL
    // signal event, and would end the session `killed`).
    const escalations = (await s.events(polite)).filter(
      (e) => e.type === 'signal' && e.payload.signal === 'SIGKILL',
    );
    assert.deepEqual(escalations, [], 'terminated at once, not escalated at the deadline');
    await within(20_000, 'its process is gone', () => !alive(pidOf(polite)));

    const t1 = Date.now();
    await s.api('POST', `/v1/sessions/${stubborn}/kill`, { graceful: true });
    await s.until(stubborn, (x) => x.lastMessage === 'still working', GRACE_MS);
    assert.notEqual((await s.session(stubborn)).status, 'stopped', 'alive while its grace lasts');
    const end = await s.until(stubborn, (x) => x.status === 'stopped', GRACE_MS + 15_000);
    const took2 = Date.now() - t1;
    console.log(`# a stubborn agent was killed ${took2} ms after SIGTERM (grace ${GRACE_MS} ms)`);
    assert.equal(end.endReason, 'killed', JSON.stringify(end));
    assert.ok(took2 >= GRACE_MS - 100, `not before the deadline (${took2} ms)`);
    assert.ok(took2 < GRACE_MS + 5000, `soon after the deadline (${took2} ms)`);
    await within(20_000, 'its processes are gone', async () => (await node.marked()).length === 0);
  });
});
