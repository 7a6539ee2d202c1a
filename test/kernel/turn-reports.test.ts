import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { LogEvent } from '../../src/store/events.ts';
import { call, forEachWarren, outputs, until } from '../helpers/warrens.ts';

/** The fd the gate stream gets in the listener (after stdin, its pipe end and lifecycle end). */
const GATE_FD = 3;

forEachWarren('turn reports', (t) => {
  it('input that waited for a turn to end is taken in the same commit as that idle', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'room' });
    const gate = await call(w, 'streams_create', { name: 'gate' });
    const batches: LogEvent[][] = [];
    const off = w.store.writer.onCommit((events) => batches.push([...events]));
    try {
      // Takes one input, then stays busy in a blocking read on the gate, then listens.
      const s = await call(w, 'ipc_spawn', {
        script: {
          steps: [{ wait: {} }, { read: { fd: GATE_FD } }, { listen: { say: 'got ${input.text}' } }],
        },
        pipe: 'detach',
      });
      const id: string = s.session.id;
      const g = await call(w, 'streams_attach', {
        session: id,
        stream: 'gate',
        permission: 'r',
        mode: 'sync',
      });
      assert.equal(g.fd, GATE_FD);
      await call(w, 'streams_attach', { session: id, stream: 'room', permission: 'r', mode: 'async' });
      const first = await call(w, 'ipc_write', { fd: room.fd, message: 'one' });
      const inputs = () =>
        batches.flat().filter((e) => e.type === 'session.input' && e.session_id === id) as LogEvent[];
      await until(() => inputs().length === 1, 15_000, 'the first input taken');
      assert.deepEqual(inputs()[0]!.payload.seqs, [first.seq]);
      // Written while the agent is busy in its read: it waits for the end of that turn.
      const second = await call(w, 'ipc_write', { fd: room.fd, message: 'two' });
      await call(w, 'ipc_write', { fd: gate.fd, message: 'go' });
      await until(() => inputs().length === 2, 15_000, 'the second input taken');
      const taken = batches.find((b) =>
        b.some(
          (e) =>
            e.type === 'session.input' &&
            e.session_id === id &&
            (e.payload.seqs as number[] | undefined)?.[0] === second.seq,
        ),
      )!;
      const statuses = taken
        .filter((e) => e.type === 'session.status' && e.session_id === id)
        .map((e) => e.payload.to);
      // One commit: the turn's end (idle), the next turn's start (running) and its input.
      assert.deepEqual(statuses, ['idle', 'running']);
      // And the turn it started ran: its answer names what it took.
      const said = await until(
        async () => (await outputs(w, id)).find((o) => o.startsWith('got ')),
        15_000,
        'the answer',
      );
      assert.match(said, /two/);
      // The script's answer and the idle ending that turn are one write too.
      const answered = await until(
        () => batches.find((b) => b.some((e) => e.type === 'session.output' && e.session_id === id)),
        15_000,
        'the answer committed',
      );
      assert.ok(
        answered.some((e) => e.type === 'session.status' && e.session_id === id && e.payload.to === 'idle'),
      );
    } finally {
      off();
    }
  });
});
