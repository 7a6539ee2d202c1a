import { z } from 'zod';
import { defineSyscall } from '../../../contract/syscall.ts';
import { forbidden, invalid } from '../../../vocab/errors.ts';
import { actorOf, mustReach, needGroup } from '../actor.ts';
import { parentOf, within } from '../names.ts';
import { groupIn } from '../registry.ts';
import { actingGroup, delivery, folder, groups, text } from './common.ts';

/** Session tools (clear, inject) and delegation down and up the tree. */

export const clearSession = defineSyscall({
  name: 'clear_session',
  group: 'groups',
  summary: "Start a group's agent afresh: its session ends, its log stays, the next message starts a new one",
  input: z.object({
    target: folder.optional().describe('The group (default: your own); yours or one under it'),
    ...actingGroup,
  }),
  output: z.object({
    folder: z.string(),
    cleared: z.string().nullable().describe('The session that was ended'),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/clear' },
  cli: {
    command: ['group', 'clear'],
    positional: ['target'],
    examples: ['warren group clear main/research'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const target = i.target ?? needGroup(a, 'clear_session');
    mustReach(a, target, 'clear_session');
    const cleared = await groups(ctx).agents.clear(a.zone, target, a.id);
    return { folder: target, cleared };
  },
});

export const injectMessage = defineSyscall({
  name: 'inject_message',
  group: 'groups',
  summary: "Put a message into a group's agent as if it had come in (starting the agent if needed)",
  input: z.object({ target: folder, text, ...actingGroup }),
  output: delivery.extend({ folder: z.string() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/inject' },
  cli: {
    command: ['group', 'inject'],
    positional: ['target', 'text'],
    examples: ['warren group inject main "status?"'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    mustReach(a, i.target, 'inject_message');
    const d = await groups(ctx).agents.deliver(a.zone, i.target, i.text);
    await groups(ctx).tables.write(async (tx) => {
      tx.append({
        zone: a.zone,
        type: 'group.injected',
        actor: a.id,
        session_id: d.sessionId,
        payload: { folder: i.target, how: d.how },
      });
    });
    return { ...d, folder: i.target };
  },
});

/** Delegation is a message with a reply path: the receiver is told who asked and how to answer. */
async function delegate(
  ctx: Parameters<typeof clearSession.handler>[0],
  zone: string,
  by: string,
  from: string,
  to: string,
  direction: 'down' | 'up',
  body: string,
) {
  const id = ctx.kernel.ids.id('dlg');
  const head =
    direction === 'down'
      ? `[delegated by ${from} (${id}); answer with delegate_to_parent]`
      : `[from child ${from} (${id}); answer with delegate_to_child child=${from}]`;
  const d = await groups(ctx).agents.deliver(zone, to, `${head}\n${body}`);
  await groups(ctx).tables.write(async (tx) => {
    tx.append({
      zone,
      type: 'group.delegated',
      actor: by,
      session_id: d.sessionId,
      payload: { id, from, to, direction, how: d.how },
    });
  });
  return { delegation: id, from, to, ...d };
}

const delegated = delivery.extend({ delegation: z.string(), from: z.string(), to: z.string() });

export const delegateToChild = defineSyscall({
  name: 'delegate_to_child',
  group: 'groups',
  summary: 'Hand work to a group under yours: its agent gets the text and your reply path',
  input: z.object({ child: folder.describe('A group under yours'), text, ...actingGroup }),
  output: delegated,
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/delegate/child' },
  cli: {
    command: ['group', 'delegate'],
    positional: ['child', 'text'],
    examples: ['warren group delegate main/research "find X" --group main'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const from = needGroup(a, 'delegate_to_child');
    if (i.child === from || !within(i.child, from))
      throw forbidden(`delegate_to_child: ${i.child} is not under ${from}`);
    await groupIn(groups(ctx).tables.reader, a.zone, i.child);
    return delegate(ctx, a.zone, a.id, from, i.child, 'down', i.text);
  },
});

export const delegateToParent = defineSyscall({
  name: 'delegate_to_parent',
  group: 'groups',
  summary: "Hand work or an answer to your group's parent",
  input: z.object({ text, ...actingGroup }),
  output: delegated,
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/delegate/parent' },
  cli: {
    command: ['group', 'delegate-up'],
    positional: ['text'],
    examples: ['warren group delegate-up "done: …" --group main/research'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const from = needGroup(a, 'delegate_to_parent');
    const parent = parentOf(from);
    if (parent === null) throw invalid(`delegate_to_parent: ${from} is a root group`);
    await groupIn(groups(ctx).tables.reader, a.zone, parent);
    return delegate(ctx, a.zone, a.id, from, parent, 'up', i.text);
  },
});
