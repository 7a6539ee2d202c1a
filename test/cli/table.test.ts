import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTable, truncate } from '../../src/surfaces/cli/table.ts';
import { renderOutput } from '../../src/surfaces/cli/views/index.ts';

const fd = (over: Record<string, unknown>) => ({
  fd: 3,
  id: 'fd_1',
  holder: 'ses_parent',
  streamId: 'str_1',
  streamName: 'room',
  permission: 'rw',
  deliveryMode: 'async',
  cursor: 10,
  owned: false,
  spawned: false,
  pending: 0,
  ...over,
});

const stream = (over: Record<string, unknown>) => ({
  id: 'str_1',
  zone: 'default',
  name: 'room',
  kind: 'named',
  owner: 'operator:root',
  sessionId: null,
  selfEcho: false,
  createdAt: 0,
  closedAt: null,
  ...over,
});

describe('table renderer', () => {
  it('aligns columns under their headers', () => {
    const out = renderTable(
      ['ID', 'Name'],
      [
        ['1', 'alpha'],
        ['22', 'b'],
      ],
    );
    assert.equal(out, 'ID  Name\n1   alpha\n22  b\n');
  });

  it('cuts long cells with …, and fits the terminal width', () => {
    assert.equal(truncate('abcdef', 4), 'abc…');
    const long = 'x'.repeat(200);
    const capped = renderTable(['A', 'B'], [['id', long]], { maxCell: 20 });
    assert.ok(capped.includes(`${'x'.repeat(19)}…`));
    const fitted = renderTable(['ID', 'Content'], [['ses_01', long]], { width: 40 });
    for (const line of fitted.trimEnd().split('\n')) assert.ok(line.length <= 40, line);
    assert.ok(fitted.includes('ses_01'), 'the narrow column is kept whole');
  });

  it('flattens newlines so a row stays one line', () => {
    assert.equal(renderTable(['T'], [['a\nb']]), 'T\na b\n');
  });

  it('prints the empty message when there are no rows', () => {
    assert.equal(renderTable(['A'], [], { empty: 'nothing' }), 'nothing\n');
  });
});

describe('views', () => {
  it('streams list: one indented row per subscriber', () => {
    const out = renderOutput(
      'ipc_list_streams',
      {
        streams: [
          {
            ...stream({}),
            bufferDepth: 7,
            subscribers: [
              fd({ fd: 3, holder: 'ses_parent', owned: true, spawned: true }),
              fd({ fd: 12, holder: 'operator:root', permission: 'w', deliveryMode: 'detach' }),
            ],
          },
          { ...stream({ id: 'str_2', name: 'empty-room' }), bufferDepth: 0, subscribers: [] },
        ],
      },
      {},
    );
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID +Name +Subscribers +Buffer Depth$/);
    assert.match(lines[1]!, /^str_1 +room +2 +7$/);
    assert.match(lines[2]!, /^ {4}fd 3 +ses_parent +rw\/async +\(spawned\) \(owned\)$/);
    assert.match(lines[3]!, /^ {4}fd 12 +operator:root +w\/detach$/);
    assert.match(lines[4]!, /^str_2 +empty-room +0 +0$/);
    assert.equal(lines.length, 5);
    // Subscriber rows align among themselves.
    assert.equal(lines[2]!.indexOf('rw/async'), lines[3]!.indexOf('w/detach'));
  });

  it('ps: the session columns', () => {
    const session = {
      id: 'ses_1',
      zone: 'default',
      parentId: 'ses_0',
      depth: 1,
      status: 'stopped',
      endReason: 'completed',
      runtime: 'script',
      runner: 'local',
      title: 'helper',
      parentClose: 'reparent',
      lastMessage: 'done\nall good',
      suspendReason: null,
      turns: 2,
      usage: {},
      createdAt: 0,
      updatedAt: 0,
      endedAt: 1_000,
    };
    const out = renderOutput('ps', { sessions: [session] }, {});
    assert.match(out, /^ID +Title +Status +Reason\/End +Parent +Depth +Runtime +Last message\n/);
    assert.match(
      out,
      /ses_1 +helper +stopped +completed 1970-01-01T00:00:01.000Z +ses_0 +1 +script +done all good/,
    );
    assert.equal(renderOutput('ps', { sessions: [] }, {}), 'no sessions\n');
  });

  it('session events: text when the payload has it, else the payload', () => {
    const ev = (seq: number, payload: Record<string, unknown>) => ({
      seq,
      id: `ev_${seq}`,
      zone: 'default',
      ts: 0,
      type: 'session.output',
      actor: 'ses_1',
      session_id: 'ses_1',
      stream_id: null,
      payload,
    });
    const out = renderOutput(
      'session_events',
      { events: [ev(1, { text: 'hello' }), ev(2, { status: 'idle' })] },
      {},
    );
    assert.match(out, /^Seq +Type +Timestamp +Content\n/);
    assert.match(out, /1 +session\.output +1970-01-01T00:00:00\.000Z +hello\n/);
    assert.match(out, /2 +session\.output +1970-01-01T00:00:00\.000Z +\{"status":"idle"\}\n/);
    const log = renderOutput('events', { events: [ev(9, { text: 'x' })] }, {});
    assert.match(log, /^Seq +ID +Type +Timestamp +Payload\n9 +ev_9 +session\.output/);
  });

  it('fds list and streams attachments: the fd columns', () => {
    for (const name of ['ipc_list_fds', 'streams_attachments']) {
      const out = renderOutput(name, { fds: [fd({ owned: true, pending: 2 })] }, {});
      assert.match(out, /^FD +Stream +Perm +Mode +Cursor +Pending +Owned\n3 +room +rw +async +10 +2 +yes\n$/);
    }
  });

  it('one-line confirmations, and a generic fallback', () => {
    assert.equal(
      renderOutput('kill', { id: 'ses_1', signal: 'SIGKILL', deadline: null }, {}),
      'SIGKILL sent to ses_1\n',
    );
    assert.equal(renderOutput('send', { seq: 41 }, {}), 'sent (seq 41)\n');
    assert.equal(renderOutput('no_such_view', { a: 1, b: { c: true } }, {}), 'a  1\nb  {"c":true}\n');
  });
});
