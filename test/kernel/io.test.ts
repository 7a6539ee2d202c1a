import assert from 'node:assert/strict';
import { it } from 'node:test';
import { watchedClock } from '../helpers/clock.ts';
import { asSession, call, forEachWarren, idleScript, op, until } from '../helpers/warrens.ts';

forEachWarren('streams and fds', (t) => {
  it('a sync read waits a bounded time, then says "nothing yet"', async () => {
    const clock = watchedClock();
    const w = await t.open({ clock, kernel: { maxWaitMs: 150 } });
    const { fd } = await call(w, 'streams_create', { name: 'quiet' });
    const mark = clock.timers.length;
    const r = await call(w, 'ipc_read', { fd, wait: true, waitMs: 60_000 });
    assert.equal(r.timedOut, true);
    assert.deepEqual(r.messages, []);
    // Bounded: the 60 s asked for was capped at maxWaitMs; it waited: its timer ran out.
    const waits = clock.since(mark).filter((x) => x.keepAlive);
    assert.ok(waits.length > 0, 'the read waited on a timer');
    assert.ok(
      waits.every((x) => x.ms <= 150),
      `capped at 150 ms: ${waits.map((x) => x.ms)}`,
    );
    assert.ok(
      waits.some((x) => x.fired),
      'it answered when its wait ran out',
    );
  });

  it("a script's ${input.text} is what was sent; ${input.rendered} is the batch as a text agent sees it", async () => {
    const w = await t.open();
    const s = await call(w, 'ipc_spawn', {
      script: {
        steps: [{ wait: { as: 'm' } }, { say: 'text=${m.text}|rendered=${m.rendered}' }, { listen: {} }],
      },
    });
    const id = s.session.id as string;
    await until(async () => (await call(w, 'session_show', { id })).session.status === 'idle');
    await call(w, 'send', { id, text: 'hello there' });
    const said = await until(async () =>
      (await call(w, 'session_events', { id, limit: 100 })).events.find(
        (e: { type: string }) => e.type === 'session.output',
      ),
    );
    assert.match(
      said.payload.text,
      /^text=hello there\|rendered=\[message fd=0 stream=stdin:\S+ from=operator:admin seq=\d+\] hello there$/,
    );
  });

  it('a waiting read returns as soon as a message arrives', async () => {
    const clock = watchedClock();
    const w = await t.open({ clock, kernel: { maxWaitMs: 5000 } });
    const room = await call(w, 'streams_create', { name: 'r1', selfEcho: true });
    const mark = clock.timers.length;
    const reader = call(w, 'ipc_read', { fd: room.fd, wait: true });
    // The read is asleep on its timer before the write (else it would find the message at once).
    await until(async () => clock.since(mark).some((x) => x.keepAlive));
    const { seq } = await call(w, 'ipc_write', { fd: room.fd, message: 'hi' });
    const r = await reader;
    // Woken by the message, not by its 5 s wait running out (a missed wake-up still answers
    // with the message, after the wait: only the timer tells the two apart).
    assert.ok(!clock.since(mark).some((x) => x.keepAlive && x.fired), 'its wait never ran out');
    assert.equal(r.timedOut, false);
    assert.deepEqual(
      r.messages.map((m: { text: string; seq: number }) => [m.text, m.seq]),
      [['hi', seq]],
    );
    assert.equal(r.cursor, seq);
    assert.deepEqual((await call(w, 'ipc_read', { fd: room.fd })).messages, []);
  });

  it('self-echo off: a writer never receives its own messages; on: it does', async () => {
    const w = await t.open();
    const quiet = await call(w, 'streams_create', { name: 'no-echo' });
    await call(w, 'ipc_write', { fd: quiet.fd, message: 'mine' });
    assert.deepEqual((await call(w, 'ipc_read', { fd: quiet.fd })).messages, []);
    const loud = await call(w, 'streams_create', { name: 'echo', selfEcho: true });
    await call(w, 'ipc_write', { fd: loud.fd, message: 'mine' });
    assert.equal((await call(w, 'ipc_read', { fd: loud.fd })).messages[0].text, 'mine');
  });

  it('async fds of a running agent are pushed, batched at its next safe point', async () => {
    const w = await t.open();
    // Busy in a blocking read on a gate (fd 3, after stdin, pipe and lifecycle) until the
    // test opens it: whatever arrives meanwhile waits for the next safe point, however slow
    // the writes are.
    const agent = await call(w, 'ipc_spawn', {
      script: {
        steps: [
          { wait: {} },
          { read: { fd: 3 } },
          { wait: { as: 'got' } },
          { say: '${got.text}' },
          { listen: {} },
        ],
      },
      pipe: 'detach',
    });
    const id = agent.session.id;
    const gate = await call(w, 'streams_create', { name: 'gate' });
    const g = await call(w, 'streams_attach', { session: id, stream: 'gate', permission: 'r', mode: 'sync' });
    assert.equal(g.fd, 3);
    const room = await call(w, 'streams_create', { name: 'batch', selfEcho: true });
    await call(w, 'streams_attach', { session: id, stream: 'batch', mode: 'async' });
    const inputsOf = async () =>
      (await call(w, 'session_events', { id })).events.filter(
        (e: { type: string }) => e.type === 'session.input',
      );
    await call(w, 'ipc_write', { fd: room.fd, message: 'zero' });
    await until(async () => (await inputsOf()).length === 1, 15_000, 'the first input');
    await call(w, 'ipc_write', { fd: room.fd, message: 'one' });
    await call(w, 'ipc_write', { fd: room.fd, message: 'two' });
    await call(w, 'send', { id, text: 'three' });
    await call(w, 'ipc_write', { fd: gate.fd, message: 'go' });
    const inputs = await until(async () => {
      const evs = await inputsOf();
      return evs.length > 1 && evs;
    }, 15_000);
    assert.equal(inputs[1].payload.seqs.length, 3, 'all pending messages arrive as one input');
    assert.match(inputs[1].payload.text, /one[\s\S]*two[\s\S]*three/);
  });

  it('permissions: no reading a w fd, no writing an r fd, attenuation, w only with detach', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript });
    const asA = asSession(a.session.id);
    const room = await call(w, 'ipc_create_stream', { name: 'perm-room' }, asA);
    await assert.rejects(
      call(
        w,
        'ipc_attach',
        { fd: room.fd, targetSessionId: b.session.id, permission: 'w', deliveryMode: 'async' },
        asA,
      ),
      { code: 'invalid_input' },
    );
    const ro = await call(
      w,
      'ipc_attach',
      { fd: room.fd, targetSessionId: b.session.id, permission: 'r', deliveryMode: 'detach' },
      asA,
    );
    const asB = asSession(b.session.id);
    await assert.rejects(call(w, 'ipc_write', { fd: ro.fd, message: 'x' }, asB), { code: 'forbidden' });
    // b holds r: it cannot hand anyone rw
    await assert.rejects(
      call(
        w,
        'ipc_attach',
        { fd: ro.fd, targetSessionId: a.session.id, permission: 'rw', deliveryMode: 'async' },
        asB,
      ),
      { code: 'forbidden' },
    );
    const wo = await call(
      w,
      'ipc_attach',
      { fd: room.fd, targetSessionId: b.session.id, permission: 'w', deliveryMode: 'detach' },
      asA,
    );
    await assert.rejects(call(w, 'ipc_read', { fd: wo.fd }, asB), { code: 'forbidden' });
    await call(w, 'ipc_write', { fd: wo.fd, message: 'from b' }, asB);
    await assert.rejects(call(w, 'ipc_write', { fd: 99, message: 'x' }, asB), { code: 'not_found' });
  });

  it('close refuses while messages are undelivered, unless forced (and the force is logged)', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'full' });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const asA = asSession(a.session.id);
    const { fd } = await call(w, 'streams_attach', { session: a.session.id, stream: 'full', mode: 'detach' });
    await call(w, 'ipc_write', { fd: room.fd, message: 'unread' });
    await assert.rejects(
      call(w, 'ipc_close', { fd }, asA),
      (e: Error & { code: string; details: { undelivered: number } }) => {
        assert.equal(e.code, 'undelivered_messages');
        assert.equal(e.details.undelivered, 1);
        return true;
      },
    );
    const listed = (await call(w, 'ipc_list_fds', {}, asA)).fds.find((f: { fd: number }) => f.fd === fd);
    assert.equal(listed.pending, 1);
    const r = await call(w, 'ipc_close', { fd, force: true }, asA);
    assert.equal(r.undelivered, 1);
    const closed = (await call(w, 'events', { type: 'fd.closed' })).events[0];
    assert.equal(closed.payload.forced, true);
    assert.equal(closed.payload.undelivered, 1);
  });

  it('lists streams with subscribers and buffer depth; internals only on request', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const room = await call(w, 'streams_create', { name: 'depth' });
    await call(w, 'streams_attach', { session: a.session.id, stream: 'depth', mode: 'detach' });
    await call(w, 'ipc_write', { fd: room.fd, message: '1' });
    await call(w, 'ipc_write', { fd: room.fd, message: '2' });
    const { streams } = await call(w, 'ipc_list_streams');
    assert.deepEqual(
      streams.map((s: { name: string }) => s.name),
      ['depth'],
    );
    assert.equal(streams[0].bufferDepth, 2);
    assert.equal(streams[0].subscribers.length, 2);
    const all = (await call(w, 'ipc_list_streams', { internal: true })).streams.map(
      (s: { name: string }) => s.name.split(':')[0],
    );
    assert.deepEqual(all.sort(), ['depth', 'lifecycle', 'pipe', 'stdin']);
    const seen = (await call(w, 'ipc_list_streams', {}, asSession(a.session.id))).streams;
    assert.deepEqual(
      seen.map((s: { name: string }) => s.name),
      ['depth'],
    );
  });

  it('share: a child grants its parent a stream and sends a [stream-ref] notice', async () => {
    const w = await t.open();
    const parent = await call(w, 'ipc_spawn', { script: idleScript });
    const child = await call(w, 'ipc_spawn', { script: idleScript }, asSession(parent.session.id));
    const asChild = asSession(child.session.id, 2);
    await call(w, 'ipc_create_stream', { name: 'findings' }, asChild);
    const shared = await call(
      w,
      'ipc_share_stream',
      { streamName: 'findings', permission: 'r', deliveryMode: 'detach' },
      asChild,
    );
    assert.equal(shared.parent, parent.session.id);
    const pfds = (await call(w, 'ipc_list_fds', {}, asSession(parent.session.id))).fds;
    const got = pfds.find((f: { fd: number }) => f.fd === shared.parentFd);
    assert.equal(got.streamName, 'findings');
    assert.equal(got.permission, 'r');
    const stdin = await call(w, 'streams_transcript', { stream: `stdin:${parent.session.id}` });
    assert.ok(stdin.messages.some((m: { text: string }) => m.text.startsWith('[stream-ref]')));
    await assert.rejects(call(w, 'ipc_share_stream', { streamName: `pipe:${child.session.id}` }, asChild), {
      code: 'reserved_name',
    });
    // Named by fd as well: fd 0, 1 and 2 are the child's own stdin, pipe and lifecycle.
    for (const fd of [0, 1, 2])
      await assert.rejects(
        call(w, 'ipc_share_stream', { fd }, asChild),
        { code: 'reserved_name' },
        `fd ${fd}`,
      );
    await assert.rejects(
      call(w, 'ipc_share_stream', { streamName: 'findings', permission: 'rw' }, asSession(parent.session.id)),
      {
        code: 'forbidden',
      },
    );
  });

  it('event time windows take ISO 8601 or epoch ms, and refuse an empty or bad time', async () => {
    const w = await t.open();
    const now = Date.now();
    const iso = (await call(w, 'events', { since: new Date(now - 60_000).toISOString() })).events;
    assert.ok(iso.length > 0);
    assert.equal((await call(w, 'events', { since: String(now + 60_000) })).events.length, 0);
    await assert.rejects(call(w, 'events', { since: '' }), { code: 'invalid_input' });
    await assert.rejects(call(w, 'events', { until: 'yesterday-ish' }), { code: 'invalid_input' });
  });

  it('message writes that share a batch fail alone, each with its own error; the others commit in order', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'shared', selfEcho: true });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const ro = await call(w, 'ipc_attach', {
      fd: room.fd,
      targetSessionId: a.session.id,
      permission: 'r',
      deliveryMode: 'detach',
    });
    const gone = await call(w, 'ipc_spawn', { script: idleScript });
    const goneFd = (
      await call(w, 'ipc_attach', {
        fd: room.fd,
        targetSessionId: gone.session.id,
        permission: 'rw',
        deliveryMode: 'detach',
      })
    ).fd;
    await call(w, 'kill', { id: gone.session.id, signal: 'SIGKILL' });
    await until(
      async () => (await call(w, 'session_show', { id: gone.session.id })).session.status === 'stopped',
    );
    const units: number[] = [];
    const stop = w.store.writer.onBatch((b) => units.push(b.units));
    // Issued in one tick: one batch, where a message write reads but takes no savepoint.
    const results = await Promise.allSettled([
      w.kernel.write(op, room.fd, 'first'),
      w.kernel.write(op, 999, 'no such fd'),
      w.kernel.write(asSession(a.session.id), ro.fd, 'read-only'),
      w.kernel.write(op, room.fd, 'second'),
      w.kernel.write(asSession(gone.session.id), goneFd, 'from a stopped session'),
      w.kernel.write(op, room.fd, 'third'),
    ]);
    stop();
    assert.ok(units.includes(6), `one batch of the six writes (batches: ${units.join(', ')})`);
    const codes = results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code));
    assert.deepEqual(codes, ['ok', 'not_found', 'forbidden', 'ok', 'session_stopped', 'ok']);
    const seqs = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.seq] : []));
    assert.deepEqual(seqs, [seqs[0], seqs[0]! + 1, seqs[0]! + 2], 'the three that committed are consecutive');
    const got = (await call(w, 'ipc_read', { fd: room.fd })).messages.map((m: { text: string }) => m.text);
    assert.deepEqual(got, ['first', 'second', 'third']);
  });

  it('transcript pages backwards; session events page forwards', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'pages' });
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++)
      seqs.push((await call(w, 'ipc_write', { fd: room.fd, message: `m${i}` })).seq);
    const first = await call(w, 'streams_transcript', { stream: 'pages', limit: 2 });
    assert.deepEqual(
      first.messages.map((m: { text: string }) => m.text),
      ['m4', 'm3'],
    );
    const next = await call(w, 'streams_transcript', {
      stream: room.stream.id,
      limit: 2,
      before: first.messages[1].seq,
    });
    assert.deepEqual(
      next.messages.map((m: { text: string }) => m.text),
      ['m2', 'm1'],
    );
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const all = (await call(w, 'session_events', { id: a.session.id })).events;
    assert.ok(all.length > 3);
    const from = await call(w, 'session_events', { id: a.session.id, from: all[1].seq, limit: 2 });
    assert.deepEqual(
      from.events.map((e: { seq: number }) => e.seq),
      [all[2].seq, all[3].seq],
    );
  });
});
