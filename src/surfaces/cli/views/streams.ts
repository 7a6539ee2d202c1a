import { renderTable } from '../table.ts';
import { type Fd, list, type Message, type Stream, type StreamListing, type View, view } from './format.ts';
import { fdTable, messageTable } from './tables.ts';

/** Streams and operator rooms. */

const listStreams = view<{ streams: StreamListing[] }>((out, ctx) =>
  renderTable(
    ['ID', 'Name', 'Subscribers', 'Buffer Depth'],
    out.streams.map((s) => ({
      cells: [s.id, s.name, String(s.subscribers.length), String(s.bufferDepth)],
      sub: s.subscribers.map((f) => [
        `fd ${f.fd}`,
        f.holder,
        `${f.permission}/${f.deliveryMode}`,
        [f.spawned ? '(spawned)' : '', f.owned ? '(owned)' : ''].filter(Boolean).join(' '),
      ]),
    })),
    { ...ctx, empty: 'no streams' },
  ),
);

const transcript = view<{ stream: Stream; messages: Message[] }>((out, ctx) =>
  messageTable(out.messages, ctx.width),
);

const create = view<{ stream: Stream; fd: number }>(
  (out) => `created ${out.stream.name} (${out.stream.id}); operator fd ${out.fd}\n`,
);

/** `target` and `durable` are absent in what an older server sends. */
interface AttachOut {
  target?: string;
  session: string | null;
  stream: string;
  fd: number | null;
  created: boolean;
  durable?: boolean;
}

/** `ses_1`, or `task_1 (ses_1)` when the target stands for a session. */
const who = (target: string | undefined, session: string | null) =>
  target === undefined || session === target
    ? String(session)
    : session === null
      ? target
      : `${target} (${session})`;

const attach = view<AttachOut>((out) => {
  const kept = out.durable ? `kept for ${out.target} across its sessions; ` : '';
  if (out.session === null)
    return `${kept}${out.target} has no live session yet: attached when it gets one\n`;
  return `${kept}${out.created ? 'attached' : 'already attached:'} ${who(out.target, out.session)} to ${out.stream} as fd ${out.fd}\n`;
});

const detach = view<{
  target?: string;
  session: string | null;
  stream: string;
  detached: number;
  durable?: boolean;
}>(
  (out) =>
    (out.durable ? `forgot the durable attachment of ${out.target} to ${out.stream}\n` : '') +
    (out.detached
      ? `detached ${who(out.target, out.session)} from ${out.stream}\n`
      : out.durable
        ? ''
        : `${who(out.target, out.session)} was not attached to ${out.stream}\n`),
);

interface DurableOut {
  streamName: string;
  permission: string;
  mode: string;
  createdBy: string;
  applied: boolean;
}

const attachments = view<{ target?: string; session?: string | null; fds: Fd[]; durable?: DurableOut[] }>(
  (out, ctx) => {
    const durable = out.durable ?? [];
    const live =
      out.session === null && durable.length > 0
        ? `${out.target} has no live session\n`
        : fdTable(out.fds, ctx.width);
    if (durable.length === 0) return live;
    const kept = renderTable(
      ['Durable (task)', 'Perm', 'Mode', 'Applied', 'By'],
      durable.map((d) => [d.streamName, d.permission, d.mode, d.applied ? 'yes' : 'waiting', d.createdBy]),
      ctx.width ? { width: ctx.width } : {},
    );
    return `${live}\n${kept}`;
  },
);

const close = view<{ stream: string; id: string; evicted: string[]; reaped: string[] }>(
  (out) =>
    `closed ${out.stream} (${out.id}); evicted ${list(out.evicted)}` +
    (out.reaped.length ? `; reaped ${list(out.reaped)}` : '') +
    '\n',
);

export const streamViews: Record<string, View> = {
  ipc_list_streams: listStreams,
  streams_transcript: transcript,
  streams_create: create,
  streams_attach: attach,
  streams_detach: detach,
  streams_attachments: attachments,
  streams_close: close,
};
