import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import type { Warren } from '../../syscalls/warren.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { DEFAULT_READ_ITEMS, parseUri, TEMPLATES, uri, type WarrenUri } from './uris.ts';

/** Resources per `resources/list` page. */
export const LIST_PAGE = 100;
/** The most text one `resources/read` returns (unless a single item is larger): the rest is behind `next`. */
export const MAX_READ_BYTES = 512 * 1024;

const JSON_TYPE = 'application/json';

/**
 * The tool whose right a resource rides on: a resource is no side door past a session's
 * tool set (its tier and grants). Reading a session is `session_show`, its log
 * `session_events`, a transcript `streams_transcript`; an operator's own log is `events`.
 */
export function readTool(kind: WarrenUri['kind'], p: Principal): string {
  if (kind === 'events') return p.kind === 'operator' ? 'events' : 'session_events';
  if (kind === 'session') return 'session_show';
  if (kind === 'session-events') return 'session_events';
  return 'streams_transcript';
}

/** Whether the caller may read resources of this kind at all (the kernel then checks which ones). */
export function mayRead(warren: Warren, p: Principal, kind: WarrenUri['kind']): boolean {
  const s = warren.table.get(readTool(kind, p));
  return s !== undefined && warren.gate.allows(p, s);
}

/** `forbidden`, naming the tool the caller lacks. */
export function assertMayRead(warren: Warren, p: Principal, kind: WarrenUri['kind'], u: string): void {
  if (mayRead(warren, p, kind)) return;
  throw new McpError(
    ErrorCode.InvalidParams,
    `reading ${u} needs the tool ${readTool(kind, p)}, which you may not call`,
    {
      uri: u,
      code: 'forbidden',
    },
  );
}

/**
 * Resources: the caller's log, the sessions it may read and the streams it may list, as
 * `warren://` URIs (uris.ts). Every read goes through the kernel's own views, so what a
 * caller sees here is what the same caller sees through `session_show`, `session_events`,
 * `streams_transcript` and `ipc_list_streams` — no second permission model.
 */
export function registerResources(server: Server, warren: Warren, principal: Principal): void {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: TEMPLATES,
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async (req) =>
    listPage(warren, principal, req.params?.cursor),
  );
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const u = req.params.uri;
    const parsed = parseUri(u);
    if (!parsed) throw new McpError(ErrorCode.InvalidParams, 'Resource not found', { uri: u });
    assertMayRead(warren, principal, parsed.kind, u);
    try {
      return await read(warren, principal, u, parsed);
    } catch (error) {
      throw asMcpError(error, { uri: u });
    }
  });
}

/**
 * A kernel refusal as the client sees it: unknown or unreadable is invalid params, with what
 * was asked for (`{ uri }`) and the typed code. Anything else stays an internal error.
 */
export function asMcpError(error: unknown, about: Record<string, string>): unknown {
  if (!(error instanceof WarrenError) || error.code === 'internal') return error;
  const message = error.code === 'not_found' ? `Resource not found: ${error.message}` : error.message;
  return new McpError(ErrorCode.InvalidParams, message, { ...about, code: error.code });
}

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
  throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
}

async function listPage(warren: Warren, p: Principal, cursor: string | undefined) {
  const resources: Resource[] = [];
  let at: Cursor = cursor === undefined ? { s: 'sessions' } : decodeCursor(cursor);
  if (cursor === undefined && mayRead(warren, p, 'events')) {
    resources.push({
      uri: uri.events(),
      name: 'log',
      title: p.kind === 'operator' ? `Zone ${p.zone}: its log` : 'Your log',
      description: 'Your own log, oldest first; subscribe to hear of every new event.',
      mimeType: JSON_TYPE,
    });
  }
  if (at.s === 'sessions' && mayRead(warren, p, 'session')) {
    const sessions = await warren.kernel.listSessions(p, { after: at.a, limit: LIST_PAGE });
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
      return { resources, nextCursor: encodeCursor({ s: 'sessions', a: last.id }) };
  }
  if (at.s === 'sessions') at = { s: 'streams' };
  if (!mayRead(warren, p, 'transcript')) return { resources };
  const streams = await warren.kernel.listStreams(p, { internal: true, after: at.a, limit: LIST_PAGE });
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
    ? { resources, nextCursor: encodeCursor({ s: 'streams', a: last.id }) }
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

async function read(warren: Warren, p: Principal, u: string, r: WarrenUri): Promise<ReadResourceResult> {
  const k = warren.kernel;
  const limit = 'limit' in r && r.limit ? r.limit : DEFAULT_READ_ITEMS;
  let text: string;
  switch (r.kind) {
    case 'session': {
      const session = await k.session(p, r.id);
      text = JSON.stringify({ session, events: uri.sessionEvents(r.id) });
      break;
    }
    case 'session-events': {
      const events = await k.sessionEvents(p, r.id, { from: r.after ?? 0, limit });
      text = bounded(
        events,
        events.length === limit,
        (events, next) => ({ session: r.id, events, ...(next ? { next } : {}) }),
        (e) => uri.sessionEvents(r.id, e.seq),
      );
      break;
    }
    case 'events': {
      const events = await k.ownLog(p, { after: r.after ?? 0, limit });
      text = bounded(
        events,
        events.length === limit,
        (events, next) => ({ events, ...(next ? { next } : {}) }),
        (e) => uri.events(e.seq),
      );
      break;
    }
    case 'transcript': {
      const t = await k.transcript(p, r.stream, { before: r.before, limit });
      text = bounded(
        t.messages,
        t.messages.length === limit,
        (messages, next) => ({ stream: t.stream, messages, ...(next ? { next } : {}) }),
        (m) => uri.transcript(r.stream, m.seq),
      );
      break;
    }
  }
  return { contents: [{ uri: u, mimeType: JSON_TYPE, text }] };
}
