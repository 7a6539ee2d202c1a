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
    const politeEvents = await s.events(polite);
    const escalations = politeEvents.filter((e) => e.type === 'signal' && e.payload.signal === 'SIGKILL');
    assert.deepEqual(escalations, [], 'terminated at once, not escalated at the deadline');
    const stopped = politeEvents.find((e) => e.type === 'session.status' && e.payload.to === 'stopped');
    assert.ok(stopped!.ts! < k.deadline, `stopped at ${stopped!.ts}, before the deadline ${k.deadline}`);
    await within(20_000, 'its process is gone', () => !alive(pidOf(polite)));

    const k2 = await s.api<{ signal: string; deadline: number }>('POST', `/v1/sessions/${stubborn}/kill`, {
      graceful: true,
    });
    await s.until(stubborn, (x) => x.lastMessage === 'still working', GRACE_MS);
    assert.notEqual((await s.session(stubborn)).status, 'stopped', 'alive while its grace lasts');
    // The wait's bound is a timeout for a hung test, not a measure of the escalation's speed.
    const end = await s.until(stubborn, (x) => x.status === 'stopped', GRACE_MS + 15_000);
    assert.equal(end.endReason, 'killed', JSON.stringify(end));
    // Not before the deadline: an ordering of the server's own records. The escalation is one
    // SIGKILL event, committed at or after the deadline the SIGTERM set, after its output.
    const evs = await s.events(stubborn);
    const kills = evs.filter((e) => e.type === 'signal' && e.payload.signal === 'SIGKILL');
    assert.equal(kills.length, 1, 'escalated once');
    assert.equal(kills[0]!.payload.escalatedFrom, 'SIGTERM');
    assert.ok(kills[0]!.ts! >= k2.deadline, `SIGKILL at ${kills[0]!.ts}, the deadline was ${k2.deadline}`);
    const said = evs.find((e) => e.type === 'session.output' && e.payload.text === 'still working');
    assert.ok(said && said.seq < kills[0]!.seq, 'it worked on through its grace, then was killed');
    console.log(
      `# a stubborn agent was killed ${kills[0]!.ts! - k2.deadline} ms after its deadline (grace ${GRACE_MS} ms)`,
    );
    await within(20_000, 'its processes are gone', async () => (await node.marked()).length === 0);
  });
});
