import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';

/** Reads of the action log. */

export const sessionEvents = defineSyscall({
  name: 'session_events',
  group: 'events',
  summary: "One session's action log, oldest first",
  input: z.object({
    id: s.sessionId,
    from: s.seq.optional().describe('Only events after this seq'),
    limit: s.limit,
  }),
  output: z.object({ events: z.array(s.event) }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/sessions/:id/events' },
  cli: {
    command: ['session', 'events'],
    positional: ['id'],
    examples: ['warren session events ses_01j…', 'warren session events ses_01j… --from 120 --limit 100'],
  },
  handler: async ({ kernel, principal }, i) => ({
    events: await kernel.sessionEvents(principal, i.id, {
      ...(i.from !== undefined ? { from: i.from } : {}),
      ...(i.limit !== undefined ? { limit: i.limit } : {}),
    }),
  }),
});

export const events = defineSyscall({
  name: 'events',
  group: 'events',
  summary: 'The action log, most recent first (oldest first after a cursor)',
  input: z.object({
    type: z.string().optional().describe('Exact event type, e.g. session.spawned'),
    session: s.sessionId.optional().describe("Only this session's events"),
    stream: z.string().min(1).max(200).optional().describe("Only this stream's events (a stream id)"),
    since: s.isoTime.optional().describe('ISO 8601: at or after'),
    until: s.isoTime.optional().describe('ISO 8601: at or before'),
    before: s.logPosition.optional().describe('Only events before this seq or event id (page into history)'),
    after: s.logPosition
      .optional()
      .describe('Only events after this seq or event id, oldest first (resume from the last seen)'),
    limit: s.limit,
  }),
  output: z.object({ events: z.array(s.event) }),
  callers: ['operator'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/events' },
  cli: {
    command: ['events'],
    examples: [
      'warren events',
      'warren events --type session.spawned',
      'warren events --session ses_01j… --stream str_01j…',
      'warren events --since 2026-05-01T00:00:00Z --until 2026-05-02T00:00:00Z',
      'warren events --before 500 --limit 50',
      'warren events --before 01JZ8K3M4N5P6Q7R8S9T0V1W2X',
      'warren events --after 500 --limit 100',
    ],
  },
  handler: async ({ kernel, principal }, i) => ({
    events: await kernel.events(principal, {
      ...(i.type !== undefined ? { type: i.type } : {}),
      ...(i.session !== undefined ? { session: i.session } : {}),
      ...(i.stream !== undefined ? { stream: i.stream } : {}),
      ...(i.since !== undefined ? { since: i.since } : {}),
      ...(i.until !== undefined ? { until: i.until } : {}),
      ...(i.before !== undefined ? { before: i.before } : {}),
      ...(i.after !== undefined ? { after: i.after } : {}),
      ...(i.limit !== undefined ? { limit: i.limit } : {}),
    }),
  }),
});

export const eventSyscalls = [sessionEvents, events];
