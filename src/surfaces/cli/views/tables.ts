import { renderTable } from '../table.ts';
import { type Fd, iso, type Message } from './format.ts';

/** Tables more than one view prints. */

export const fdTable = (fds: Fd[], width?: number): string =>
  renderTable(
    ['FD', 'Stream', 'Perm', 'Mode', 'Cursor', 'Pending', 'Owned'],
    fds.map((f) => [
      String(f.fd),
      f.streamName,
      f.permission,
      f.deliveryMode,
      String(f.cursor),
      String(f.pending),
      f.owned ? 'yes' : '',
    ]),
    { ...(width ? { width } : {}), empty: 'no fds' },
  );

export const messageTable = (messages: Message[], width?: number): string =>
  renderTable(
    ['Seq', 'Sender', 'Timestamp', 'Content'],
    messages.map((m) => [String(m.seq), m.from, iso(m.ts), m.text]),
    { ...(width ? { width } : {}), empty: 'no messages' },
  );
