import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';
import { attachTarget, detachTarget, targetAttachments } from './room-targets.ts';

/** The operator control plane: rooms driven from outside, with no fd of an agent's. */

export const streamsCreate = defineSyscall({
  name: 'streams_create',
  group: 'streams',
  summary: 'Create an operator-owned room',
  description:
    'Create a room anchored by the operator (rw, detach): it lives with no agent in it. Names are unique per zone; pipe:, lifecycle: and stdin: are reserved.',
  input: z.object({
    name: s.streamName,
    selfEcho: s.optionalFlag.describe('Writers also receive their own messages (a chat room)'),
  }),
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

/** A session id, or an id a plugin gives meaning to that stands for one (a task id). */
const target = z
  .string()
  .min(1)
  .max(200)
  .describe("A session id, or a task id (its task's latest live session)");

export const streamsAttach = defineSyscall({
  name: 'streams_attach',
  group: 'streams',
  summary: 'Attach a live session (or a task) to a room',
  description:
    "The target is a session id, or a task id standing for its task's latest live session. With durable=true (a task id only) the attachment is kept for the task: applied now if it has a live session, and again to every new session it gets, across restarts; it may be made before the task has started.",
  input: z.object({
    session: target,
    stream: s.streamRef,
    permission: s.permission.default('rw'),
    mode: s.deliveryMode.default('async'),
    durable: s.optionalFlag.describe('Keep it for the task across its sessions (task ids only)'),
  }),
  output: z.object({
    target: z.string(),
    session: z
      .string()
      .nullable()
      .describe('The session attached now; null when a durable target has none yet'),
    stream: z.string(),
    fd: z.number().nullable(),
    created: z.boolean(),
    durable: z.boolean(),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams/:stream/attach' },
  cli: {
    command: ['streams', 'attach'],
    positional: ['session', 'stream'],
    flags: { perm: 'permission' },
    examples: [
      'warren streams attach ses_01j… planning-room --perm rw --mode async',
      'warren streams attach task_01j… planning-room --durable',
    ],
  },
  handler: (ctx, i) =>
    attachTarget(ctx, {
      target: i.session,
      stream: i.stream,
      permission: i.permission,
      mode: i.mode,
      durable: i.durable ?? false,
    }),
});

export const streamsJoin = defineSyscall({
  name: 'streams_join',
  group: 'streams',
  summary: 'Join a room as the operator (an fd of your own to post with)',
  description:
    'Opens an rw detach fd of yours on a room of your zone, so you can post into a room an agent made (ipc_write with it). Idempotent: an fd you hold there already is returned.',
  input: z.object({ stream: s.streamRef }),
  output: z.object({ stream: z.string(), fd: z.number(), created: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams/:stream/join' },
  cli: {
    command: ['streams', 'join'],
    positional: ['stream'],
    examples: ['warren streams join planning-room'],
  },
  handler: ({ kernel, principal }, i) => kernel.roomJoin(principal, i.stream),
});

export const streamsDetach = defineSyscall({
  name: 'streams_detach',
  group: 'streams',
  summary: 'Detach a session (or a task) from a room (idempotent)',
  description: "Detaching a task detaches its live session and forgets the task's durable attachment.",
  input: z.object({ session: target, stream: s.streamRef }),
  output: z.object({
    target: z.string(),
    session: z.string().nullable(),
    stream: z.string(),
    detached: z.number(),
    durable: z.boolean().describe('A durable attachment was forgotten'),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/streams/:stream/detach' },
  cli: {
    command: ['streams', 'detach'],
    positional: ['session', 'stream'],
    examples: [
      'warren streams detach ses_01j… planning-room',
      'warren streams detach task_01j… planning-room',
    ],
  },
  handler: (ctx, i) => detachTarget(ctx, { target: i.session, stream: i.stream }),
});

const durableAttachment = z.object({
  streamId: z.string(),
  streamName: z.string(),
  permission: s.permission,
  mode: s.deliveryMode,
  createdBy: z.string(),
  createdAt: z.number(),
  applied: z.boolean().describe('Its session holds it now'),
});

export const streamsAttachments = defineSyscall({
  name: 'streams_attachments',
  group: 'streams',
  summary: "A session's (or a task's) room subscriptions",
  description:
    "For a task: its live session's room fds (those a durable attachment keeps are marked) and the task's durable attachments, applied or waiting for a session.",
  input: z.object({ session: target, ...s.pageInput }),
  output: z.object({
    target: z.string(),
    session: z.string().nullable(),
    fds: z.array(s.fd.extend({ durable: z.boolean() })),
    next: s.nextCursor,
    durable: z.array(durableAttachment),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/sessions/:session/attachments' },
  cli: {
    command: ['streams', 'attachments'],
    positional: ['session'],
    examples: ['warren streams attachments ses_01j…', 'warren streams attachments task_01j…'],
  },
  handler: async (ctx, i) => {
    const all = await targetAttachments(ctx, i.session);
    const { items, next } = s.page(all.fds, i);
    return { ...all, fds: items, next };
  },
});

export const streamsClose = defineSyscall({
  name: 'streams_close',
  group: 'streams',
  summary: 'Close a room, evicting every subscriber',
  description:
    'Evict every subscriber and remove the room. Refuses while a subscriber has undelivered messages unless force=true. Reserved plumbing cannot be closed this way.',
  input: z.object({
    stream: s.streamRef,
    force: s.optionalFlag.describe('Close even with messages undelivered (logged)'),
  }),
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
  input: z.object({
    stream: s.streamRef,
    before: s.seq.optional().describe('Only messages with a smaller seq (page back)'),
    limit: s.limit,
  }),
  output: z.object({ stream: s.stream, messages: z.array(s.message) }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
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
  streamsJoin,
  streamsDetach,
  streamsAttachments,
  streamsClose,
  streamsTranscript,
];
