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

const attach = view<{ session: string; stream: string; fd: number; created: boolean }>(
  (out) =>
    `${out.created ? 'attached' : 'already attached:'} ${out.session} to ${out.stream} as fd ${out.fd}\n`,
);

const detach = view<{ session: string; stream: string; detached: number }>((out) =>
  out.detached
    ? `detached ${out.session} from ${out.stream}\n`
    : `${out.session} was not attached to ${out.stream}\n`,
);

const attachments = view<{ fds: Fd[] }>((out, ctx) => fdTable(out.fds, ctx.width));

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
