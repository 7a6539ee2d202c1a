import type { ListContext, ResourceInfo, ResourceProvider } from '../../contract/resources.ts';
import type { SyscallContext } from '../../contract/syscall.ts';
import type { LogEvent } from '../../store/events.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { DEFAULT_READ_ITEMS, parseUri, TEMPLATES, uri, type WarrenUri } from './uris.ts';

/** Resources per listing page. */
export const LIST_PAGE = 100;
/** The most text one read returns (unless a single item is larger): the rest is behind `next`. */
export const MAX_READ_BYTES = 512 * 1024;

const JSON_TYPE = 'application/json';

/**
 * The syscall whose right a resource rides on: a resource is no side door past a session's
 * tool set (its tier and grants). Reading a session is `session_show`, its log
 * `session_events`, a transcript `streams_transcript`; an operator's own log is `events`.
 */
export function readTool(kind: WarrenUri['kind'], p: Principal): string {
  if (kind === 'events') return p.kind === 'operator' ? 'events' : 'session_events';
  if (kind === 'session') return 'session_show';
  if (kind === 'session-events') return 'session_events';
  return 'streams_transcript';
}

/**
 * What changes a resource, as a key an event carries: `session:<id>` (any event about the
 * session: its record and its log), `stream:<id>` (a message on it, or its closing: its
 * transcript), `zone:<zone>` (any event: an operator's log).
 */
function touches(e: LogEvent): string[] {
  const keys = [`zone:${e.zone}`];
  if (e.session_id) keys.push(`session:${e.session_id}`);
  if (e.stream_id && (e.type === 'stream.message' || e.type === 'stream.closed'))
    keys.push(`stream:${e.stream_id}`);
  return keys;
}

/**
 * The kernel's resources: the caller's log, the sessions it may read and the streams it may
 * list, as `warren://` URIs (uris.ts). Every read goes through the kernel's own views, so
 * what a caller sees here is what the same caller sees through `session_show`,
 * `session_events`, `streams_transcript` and `ipc_list_streams`; the door checks `via`.
 */
export const coreResources: ResourceProvider = {
  templates: TEMPLATES,
  scheme: 'warren:',
  open(u, principal) {
    const r = parseUri(u);
    if (!r) throw new WarrenError('not_found', `no resource ${u}`, { uri: u });
    return {
      via: readTool(r.kind, principal),
      read: async (ctx) => ({ mimeType: JSON_TYPE, text: await read(ctx, r) }),
      watch: (ctx) => watchKey(ctx, r),
    };
  },
  list: listPage,
  touches,
};

// ---------------------------------------------------------------- listing

interface Cursor {
  /** Which part of the listing: sessions, then streams. */
  s: 'sessions' | 'streams';
  /** The last id of the previous page. */
  a?: string;
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(cursor: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(cursor.slice(0, 1024), 'base64url').toString()) as Cursor;
    if ((c.s === 'sessions' || c.s === 'streams') && (c.a === undefined || typeof c.a === 'string')) return c;
  } catch {}
  throw new WarrenError('invalid_input', 'Invalid cursor');
}

async function listPage(ctx: ListContext, cursor: string | undefined) {
  const { kernel, principal: p } = ctx;
  const may = (kind: WarrenUri['kind']) => ctx.mayCall(readTool(kind, p));
  const resources: ResourceInfo[] = [];
  let at: Cursor = cursor === undefined ? { s: 'sessions' } : decodeCursor(cursor);
  if (cursor === undefined && may('events')) {
    resources.push({
      uri: uri.events(),
      name: 'log',
      title: p.kind === 'operator' ? `Zone ${p.zone}: its log` : 'Your log',
      description: 'Your own log, oldest first; subscribe to hear of every new event.',
      mimeType: JSON_TYPE,
    });
  }
  if (at.s === 'sessions' && may('session')) {
    const sessions = await kernel.listSessions(p, { after: at.a, limit: LIST_PAGE });
    for (const s of sessions) {
      resources.push({
        uri: uri.session(s.id),
        name: s.id,
        title: s.title ?? s.id,
        description: `${s.runtime} session, ${s.status}${s.endReason ? ` (${s.endReason})` : ''}, depth ${s.depth}`,
        mimeType: JSON_TYPE,
      });
    }
    const last = sessions.at(-1);
    if (sessions.length === LIST_PAGE && last)
      return { resources, next: encodeCursor({ s: 'sessions', a: last.id }) };
  }
  if (at.s === 'sessions') at = { s: 'streams' };
  if (!may('transcript')) return { resources };
  const streams = await kernel.listStreams(p, { internal: true, after: at.a, limit: LIST_PAGE });
  for (const s of streams) {
    resources.push({
      uri: uri.transcript(s.name),
      name: s.name,
      title: `${s.name} (transcript)`,
      description: `${s.kind} stream owned by ${s.owner}, ${s.subscribers.length} open fd(s)`,
      mimeType: JSON_TYPE,
    });
  }
  const last = streams.at(-1);
  return streams.length === LIST_PAGE && last
    ? { resources, next: encodeCursor({ s: 'streams', a: last.id }) }
    : { resources };
}

// ---------------------------------------------------------------- reading

/**
 * At most `limit` items and `MAX_READ_BYTES` of text: items past the byte cap are cut from
 * the end (never below one), and `next` names the URI that continues where this one stops.
 */
function bounded<T>(
  items: T[],
  full: boolean,
  render: (items: T[], next: string | undefined) => unknown,
  nextOf: (last: T) => string,
): string {
  let kept = items;
  for (;;) {
    const cut = kept.length < items.length;
    const last = kept.at(-1);
    const next = (full || cut) && last !== undefined ? nextOf(last) : undefined;
    const text = JSON.stringify(render(kept, next));
    if (kept.length <= 1 || Buffer.byteLength(text) <= MAX_READ_BYTES) return text;
    kept = kept.slice(0, Math.ceil(kept.length / 2));
  }
}

async function read({ kernel: k, principal: p }: SyscallContext, r: WarrenUri): Promise<string> {
  const limit = 'limit' in r && r.limit ? r.limit : DEFAULT_READ_ITEMS;
  switch (r.kind) {
    case 'session': {
      const session = await k.session(p, r.id);
      return JSON.stringify({ session, events: uri.sessionEvents(r.id) });
    }
    case 'session-events': {
      const events = await k.sessionEvents(p, r.id, { from: r.after ?? 0, limit });
      return bounded(
        events,
        events.length === limit,
        (events, next) => ({ session: r.id, events, ...(next ? { next } : {}) }),
        (e) => uri.sessionEvents(r.id, e.seq),
      );
    }
    case 'events': {
      const events = await k.ownLog(p, { after: r.after ?? 0, limit });
      return bounded(
        events,
        events.length === limit,
        (events, next) => ({ events, ...(next ? { next } : {}) }),
        (e) => uri.events(e.seq),
      );
    }
    case 'transcript': {
      const t = await k.transcript(p, r.stream, { before: r.before, limit });
      return bounded(
        t.messages,
        t.messages.length === limit,
        (messages, next) => ({ stream: t.stream, messages, ...(next ? { next } : {}) }),
        (m) => uri.transcript(r.stream, m.seq),
      );
    }
  }
}

/** The key a subscription watches, after the kernel's own read check of what it names. */
async function watchKey({ kernel, principal: p }: SyscallContext, r: WarrenUri): Promise<string> {
  switch (r.kind) {
    case 'events':
      return p.kind === 'operator' ? `zone:${p.zone}` : `session:${p.sessionId}`;
    case 'session':
    case 'session-events':
      return `session:${(await kernel.session(p, r.id)).id}`;
    case 'transcript':
      // A subscription follows the stream the name meant when it was made.
      return `stream:${(await kernel.transcript(p, r.stream, { limit: 1 })).stream.id}`;
  }
}
