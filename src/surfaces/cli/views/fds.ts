import { type Fd, list, type Message, type View, view } from './format.ts';
import { fdTable, messageTable } from './tables.ts';

/** An fd holder's view: its fds, and reads, writes and closes through them. */

const listFds = view<{ fds: Fd[] }>((out, ctx) => fdTable(out.fds, ctx.width));

const read = view<{ messages: Message[]; cursor: number; timedOut: boolean }>((out, ctx) => {
  if (out.messages.length === 0) {
    return out.timedOut
      ? `nothing yet (cursor ${out.cursor}) — read again\n`
      : `nothing due (cursor ${out.cursor})\n`;
  }
  return `${messageTable(out.messages, ctx.width)}cursor ${out.cursor}\n`;
});

const write = view<{ seq: number }>((out) => `written (seq ${out.seq})\n`);

const close = view<{ fd: number; closed: boolean; undelivered: number; reaped: string[] }>((out) =>
  out.closed
    ? `closed fd ${out.fd}` + (out.reaped.length ? `; reaped ${list(out.reaped)}` : '') + '\n'
    : `fd ${out.fd} not closed: ${out.undelivered} undelivered (read them, or --force)\n`,
);

const terminate = view<{ session: string; signal: string; deadline: number | null }>(
  (out) => `${out.signal} sent to ${out.session}\n`,
);

export const fdViews: Record<string, View> = {
  ipc_list_fds: listFds,
  ipc_read: read,
  ipc_write: write,
  ipc_close: close,
  ipc_terminate: terminate,
};
