import { z } from 'zod';
import * as s from '../../../contract/schemas.ts';
import { defineSyscall } from '../../../contract/syscall.ts';
import { keysetPage } from '../../../store/paging.ts';
import { forbidden } from '../../../vocab/errors.ts';
import { socketGroup } from '../actor.ts';
import { groups } from './common.ts';

const field = (what: string) => z.string().max(300).default('').describe(what);

export const inbound = defineSyscall({
  name: 'groups_inbound',
  group: 'groups',
  summary:
    'Take an inbound chat message: the first matching route delivers it to its group, else it waits in the unrouted inbox',
  description:
    "Routes are tried in seq order; the first whose match holds delivers the message to its target group's agent (starting or reanimating it). The decision is logged (group.routed / group.unrouted). Nothing is dropped.",
  input: z.object({
    platform: field('telegram, whatsapp, …'),
    room: field('The room (group chat) id'),
    chat_jid: field('The chat id'),
    sender: field('Who wrote it'),
    verb: field('message, mention, reply, …'),
    text: z.string().describe('The message'),
    attachments: z
      .array(z.unknown())
      .max(100)
      .optional()
      .describe('Attachment descriptors, passed on as given'),
  }),
  output: z.object({
    routed: z.boolean(),
    routeId: z.string().optional(),
    group: z.string().optional(),
    sessionId: z.string().optional(),
    how: z.string().optional(),
    unroutedId: z.string().optional(),
    reason: z.string().optional(),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/inbound' },
  cli: {
    command: ['inbound', 'send'],
    examples: [
      'warren inbound send --platform telegram --room -5075870332 --sender alice --verb mention --text "hi"',
    ],
  },
  async handler(ctx, i) {
    if (socketGroup(ctx.principal) !== null)
      throw forbidden('groups_inbound is for operators (channel adapters)');
    return groups(ctx).inbound.receive(ctx.principal, i);
  },
});

const unroutedView = z.object({
  id: z.string(),
  platform: z.string(),
  room: z.string(),
  chat_jid: z.string(),
  sender: z.string(),
  verb: z.string(),
  text: z.string(),
  attachments: z.array(z.unknown()),
  reason: z.string(),
  receivedAt: z.number(),
});

export const unrouted = defineSyscall({
  name: 'groups_unrouted',
  group: 'groups',
  summary: 'The unrouted inbox: inbound messages no route took, oldest first',
  input: z.object({ ...s.pageInput }),
  output: z.object({ messages: z.array(unroutedView), next: s.nextCursor }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/inbound/unrouted' },
  cli: { command: ['inbound', 'unrouted'], examples: ['warren inbound unrouted'] },
  async handler(ctx, i) {
    if (socketGroup(ctx.principal) !== null) throw forbidden('groups_unrouted is for operators');
    const limit = i.limit ?? s.DEFAULT_PAGE;
    const { reader } = groups(ctx).tables;
    let q = reader.selectFrom('groups_unrouted').selectAll().where('zone', '=', ctx.principal.zone);
    if (i.after) q = q.where('id', '>', i.after);
    const { items, next } = await keysetPage(limit, (n) => q.orderBy('id').limit(n).execute());
    return {
      messages: items.map((r) => ({
        id: r.id,
        platform: r.platform,
        room: r.room,
        chat_jid: r.chat_jid,
        sender: r.sender,
        verb: r.verb,
        text: r.text,
        attachments: JSON.parse(r.attachments) as unknown[],
        reason: r.reason,
        receivedAt: Number(r.received_at),
      })),
      next,
    };
  },
});
