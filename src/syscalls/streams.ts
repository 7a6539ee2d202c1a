import { z } from 'zod';
import * as s from './schemas.ts';
import { defineSyscall } from './types.ts';

/** The operator control plane: rooms driven from outside, with no fd of an agent's. */

export const streamsCreate = defineSyscall({
  name: 'streams_create',
  group: 'streams',
  summary: 'Create an operator-owned room',
  description:
    'Create a room anchored by the operator (rw, detach): it lives with no agent in it. Names are unique per zone; pipe:, lifecycle: and stdin: are reserved.',
  input: z.object({ name: s.streamName, selfEcho: s.optionalFlag }),
  output: z.object({ stream: s.stream, fd: z.number() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams' },
  cli: {
    command: ['streams', 'create'],
    positional: ['name'],
    flags: { 'self-echo': 'selfEcho' },
    examples: ['warren streams create planning-room', 'warren streams create war-room --self-echo'],
  },
  handler: ({ kernel, principal }, i) => kernel.roomCreate(principal, i.name, i.selfEcho ?? false),
});

export const streamsAttach = defineSyscall({
  name: 'streams_attach',
  group: 'streams',
  summary: 'Attach a live session to a room',
  input: z.object({
    session: s.sessionId,
    stream: s.streamRef,
    permission: s.permission.default('rw'),
    mode: s.deliveryMode.default('async'),
  }),
  output: z.object({ session: z.string(), stream: z.string(), fd: z.number(), created: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams/:stream/attach' },
  cli: {
    command: ['streams', 'attach'],
    positional: ['session', 'stream'],
    flags: { perm: 'permission' },
    examples: ['warren streams attach ses_01j… planning-room --perm rw --mode async'],
  },
  handler: ({ kernel, principal }, i) =>
    kernel.roomAttach(principal, i.session, i.stream, i.permission, i.mode),
});

export const streamsDetach = defineSyscall({
  name: 'streams_detach',
  group: 'streams',
  summary: 'Detach a session from a room (idempotent)',
  input: z.object({ session: s.sessionId, stream: s.streamRef }),
  output: z.object({ session: z.string(), stream: z.string(), detached: z.number() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams/:stream/detach' },
  cli: {
    command: ['streams', 'detach'],
    positional: ['session', 'stream'],
    examples: ['warren streams detach ses_01j… planning-room'],
  },
  handler: ({ kernel, principal }, i) => kernel.roomDetach(principal, i.session, i.stream),
});

export const streamsAttachments = defineSyscall({
  name: 'streams_attachments',
  group: 'streams',
  summary: "A session's room subscriptions",
  input: z.object({ session: s.sessionId, ...s.pageInput }),
  output: z.object({ fds: z.array(s.fd), next: s.nextCursor }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/sessions/:session/attachments' },
  cli: {
    command: ['streams', 'attachments'],
    positional: ['session'],
    examples: ['warren streams attachments ses_01j…'],
  },
  handler: async ({ kernel, principal }, i) => {
    const { items, next } = s.page(await kernel.attachments(principal, i.session), i);
    return { fds: items, next };
  },
});

export const streamsClose = defineSyscall({
  name: 'streams_close',
  group: 'streams',
  summary: 'Close a room, evicting every subscriber',
  description:
    'Evict every subscriber and remove the room. Refuses while a subscriber has undelivered messages unless force=true. Reserved plumbing cannot be closed this way.',
  input: z.object({ stream: s.streamRef, force: s.optionalFlag }),
  output: z.object({
    stream: z.string(),
    id: z.string(),
    evicted: z.array(z.string()),
    reaped: z.array(z.string()),
  }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/v1/streams/:stream' },
  cli: {
    command: ['streams', 'close'],
    positional: ['stream'],
    examples: ['warren streams close planning-room'],
  },
  handler: ({ kernel, principal }, i) => kernel.roomClose(principal, i.stream, { force: i.force ?? false }),
});

export const streamsTranscript = defineSyscall({
  name: 'streams_transcript',
  group: 'streams',
  summary: "A stream's durable transcript, most recent first",
  input: z.object({ stream: s.streamRef, before: s.seq.optional(), limit: s.limit }),
  output: z.object({ stream: s.stream, messages: z.array(s.message) }),
  callers: ['operator', 'session'],
  tier: 2,
  http: { method: 'GET', path: '/v1/streams/:stream/transcript' },
  cli: {
    command: ['streams', 'transcript'],
    positional: ['stream'],
    examples: [
      'warren streams transcript planning-room',
      'warren streams transcript planning-room --before 120 --limit 50',
    ],
  },
  handler: ({ kernel, principal }, i) =>
    kernel.transcript(principal, i.stream, {
      ...(i.before !== undefined ? { before: i.before } : {}),
      ...(i.limit !== undefined ? { limit: i.limit } : {}),
    }),
});

export const streamSyscalls = [
  streamsCreate,
  streamsAttach,
  streamsDetach,
  streamsAttachments,
  streamsClose,
  streamsTranscript,
];
