import type { ResourceTemplateInfo } from '../../contract/resources.ts';
import { WarrenError } from '../../vocab/errors.ts';

/**
 * The core plugin's resource URIs (what MCP clients read and watch). One scheme, four shapes:
 *
 *   warren://events{?after,limit}                          the caller's own log, oldest first
 *   warren://sessions/{id}                                 a session's record
 *   warren://sessions/{id}/events{?after,limit}            its log, oldest first
 *   warren://streams/{name}/transcript{?before,limit}      a stream's messages, newest first
 *
 * Names and ids are one path segment each (percent-encoded: `pipe:ses_…` is
 * `pipe%3Ases_…`); a stream may be named by its id as well.
 */
export type WarrenUri =
  | { kind: 'events'; after?: number; limit?: number }
  | { kind: 'session'; id: string }
  | { kind: 'session-events'; id: string; after?: number; limit?: number }
  | { kind: 'transcript'; stream: string; before?: number; limit?: number };

/** Items one read returns by default, and at most (`limit`). */
export const DEFAULT_READ_ITEMS = 100;
export const MAX_READ_ITEMS = 500;
/** A URI longer than this is refused before it is parsed. */
const MAX_URI = 2048;

const seg = encodeURIComponent;
const query = (params: Record<string, number | undefined>) => {
  const parts = Object.entries(params).filter(([, v]) => v !== undefined);
  return parts.length ? `?${parts.map(([k, v]) => `${k}=${v}`).join('&')}` : '';
};

export const uri = {
  events: (after?: number) => `warren://events${query({ after })}`,
  session: (id: string) => `warren://sessions/${seg(id)}`,
  sessionEvents: (id: string, after?: number) => `warren://sessions/${seg(id)}/events${query({ after })}`,
  transcript: (stream: string, before?: number) =>
    `warren://streams/${seg(stream)}/transcript${query({ before })}`,
};

export const TEMPLATES: ResourceTemplateInfo[] = [
  {
    uriTemplate: 'warren://events{?after,limit}',
    name: 'log',
    title: 'Your log',
    description:
      'Your own log, oldest first after a seq: an operator’s is its zone’s, a session’s the events about itself. `next` in the content continues it.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'warren://sessions/{id}',
    name: 'session',
    title: 'A session',
    description: 'A session you may read (yourself and your descendants; operators: the zone): its record.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'warren://sessions/{id}/events{?after,limit}',
    name: 'session-log',
    title: 'A session’s log',
    description: 'A session’s events, oldest first after a seq; `next` in the content continues it.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'warren://streams/{name}/transcript{?before,limit}',
    name: 'transcript',
    title: 'A stream’s transcript',
    description:
      'The messages of a stream you hold an fd on (or your subtree’s plumbing: pipe:<id>, lifecycle:<id>), newest first; `next` pages back.',
    mimeType: 'application/json',
  },
];

const invalid = (u: string, why: string) =>
  new WarrenError('invalid_input', `Invalid warren URI ${JSON.stringify(u)}: ${why}`, { uri: u });

function cursorParam(u: string, params: URLSearchParams, name: string, max: number): number | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (!/^\d{1,16}$/.test(v) || Number(v) > max)
    throw invalid(u, `${name} must be an integer from 0 to ${max}`);
  return Number(v);
}

/**
 * The warren resource a URI names, or null for a URI of another scheme (not warren's).
 * A `warren:` URI that fits no shape is an invalid-params error.
 */
export function parseUri(u: string): WarrenUri | null {
  if (!u.startsWith('warren:')) return null;
  if (u.length > MAX_URI) throw invalid(u.slice(0, 64), 'too long');
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    throw invalid(u, 'not a URI');
  }
  const params = url.searchParams;
  const after = () => cursorParam(u, params, 'after', Number.MAX_SAFE_INTEGER);
  const limit = () => cursorParam(u, params, 'limit', MAX_READ_ITEMS) || undefined;
  let path: string[];
  try {
    path = url.pathname.split('/').slice(1).map(decodeURIComponent);
  } catch {
    throw invalid(u, 'bad percent-encoding');
  }
  if (url.host === 'events' && (path.length === 0 || (path.length === 1 && path[0] === ''))) {
    return { kind: 'events', after: after(), limit: limit() };
  }
  if (url.host === 'sessions' && path[0]) {
    if (path.length === 1) return { kind: 'session', id: path[0] };
    if (path.length === 2 && path[1] === 'events')
      return { kind: 'session-events', id: path[0], after: after(), limit: limit() };
  }
  if (url.host === 'streams' && path[0] && path.length === 2 && path[1] === 'transcript') {
    const before = cursorParam(u, params, 'before', Number.MAX_SAFE_INTEGER);
    return { kind: 'transcript', stream: path[0], before, limit: limit() };
  }
  throw invalid(u, `no such resource; the shapes are ${TEMPLATES.map((t) => t.uriTemplate).join(', ')}`);
}
