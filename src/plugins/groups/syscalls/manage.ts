import { z } from 'zod';
import { defineSyscall } from '../../../contract/syscall.ts';
import { forbidden } from '../../../vocab/errors.ts';
import { principalId } from '../../../vocab/principal.ts';
import { type Actor, actorOf, socketGroup } from '../actor.ts';
import { agentSpec } from '../agents.ts';
import { within } from '../names.ts';
import { findGroup, groupIn, insertGroup, listGroups, viewOf } from '../registry.ts';
import { parseRule } from '../tiers.ts';
import { actingGroup, delivery, folder, groups, groupView } from './common.ts';

const rules = z
  .array(z.string().min(1).max(300))
  .max(100)
  .describe('Grant rules: allow:<tool glob> / deny:<tool glob> (deny wins)');
const agent = agentSpec.describe(
  "Its agent: ipc_spawn's input less the prompt (operators only; a group's children inherit it)",
);

/** A group may make groups under its own only, and never choose their agent. */
function checkNew(a: Actor, target: string, hasAgent: boolean): void {
  if (a.folder === null) return;
  if (target === a.folder || !within(target, a.folder))
    throw forbidden(`${target} is not under group ${a.folder}`);
  if (hasAgent) throw forbidden("a group's children inherit its agent: only an operator sets one");
}

export const registerGroup = defineSyscall({
  name: 'register_group',
  group: 'groups',
  summary: 'Register a group: a folder under an existing one (operators: a root group too)',
  input: z.object({
    folder,
    name: z.string().min(1).max(200).optional().describe('A display name (default the folder)'),
    agent: agent.optional(),
    rules: rules.optional(),
    ...actingGroup,
  }),
  output: z.object({ group: groupView }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups' },
  cli: {
    command: ['group', 'register'],
    positional: ['folder'],
    examples: [
      'warren group register main --agent \'{"runtime":"claude-code"}\'',
      'warren group register main/research --rules \'["deny:send_document"]\'',
    ],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    checkNew(a, i.folder, i.agent !== undefined);
    const row = await groups(ctx).tables.write((tx) =>
      insertGroup(tx, { folder: i.folder, zone: a.zone, name: i.name, agent: i.agent, rules: i.rules }, a.id),
    );
    return { group: viewOf(row) };
  },
});

export const getGroups = defineSyscall({
  name: 'get_groups',
  group: 'groups',
  summary: 'List groups: a root group and operators see the zone’s, others their own subtree',
  input: z.object({ ...actingGroup }),
  output: z.object({
    groups: z.array(groupView.extend({ socket: z.boolean().describe('Whether its socket is open') })),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/groups' },
  cli: { command: ['group', 'list'], examples: ['warren group list'] },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const g = groups(ctx);
    const rows = await listGroups(g.tables.reader, a.zone, a.tier === 0 ? null : a.folder);
    const s = g.sockets;
    return { groups: rows.map((r) => ({ ...viewOf(r), socket: s.isOpen(r.folder) })) };
  },
});

export const refreshGroups = defineSyscall({
  name: 'refresh_groups',
  group: 'groups',
  summary:
    "Re-read the groups you see and match each socket to its agent's life (open for a live agent, closed otherwise)",
  input: z.object({ ...actingGroup }),
  output: z.object({ groups: z.array(groupView.extend({ socket: z.boolean() })) }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/refresh' },
  cli: { command: ['group', 'refresh'], examples: ['warren group refresh'] },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const g = groups(ctx);
    const rows = await listGroups(g.tables.reader, a.zone, a.tier === 0 ? null : a.folder);
    // A group's own socket stays: it is the one asking.
    for (const r of rows) if (r.folder !== a.folder) await g.agents.sync(r);
    return { groups: rows.map((r) => ({ ...viewOf(r), socket: g.sockets.isOpen(r.folder) })) };
  },
});

export const spawnGroup = defineSyscall({
  name: 'spawn_group',
  group: 'groups',
  summary: "Start a group's agent now (registering the group first if it is new)",
  input: z.object({
    folder,
    name: z.string().min(1).max(200).optional().describe('A display name (default the folder)'),
    agent: agent.optional(),
    prompt: z
      .string()
      .min(1)
      .max(64_000)
      .optional()
      .describe('Its first input (default: a note that it is up)'),
    ...actingGroup,
  }),
  output: delivery.extend({ group: groupView }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/spawn' },
  cli: {
    command: ['group', 'spawn'],
    positional: ['folder'],
    examples: ['warren group spawn main --prompt "Start."'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const g = groups(ctx);
    const reader = g.tables.reader;
    if (!(await findGroup(reader, i.folder))) {
      checkNew(a, i.folder, i.agent !== undefined);
      await g.tables.write((tx) =>
        insertGroup(
          tx,
          { folder: i.folder, zone: a.zone, name: i.name, agent: i.agent, rules: undefined },
          a.id,
        ),
      );
    } else if (a.folder !== null && !within(i.folder, a.folder)) {
      throw forbidden(`${i.folder} is outside group ${a.folder}'s subtree`);
    }
    await groupIn(reader, a.zone, i.folder);
    const d = await g.agents.deliver(
      a.zone,
      i.folder,
      i.prompt ?? `You are the agent of group ${i.folder}. Wait for messages.`,
    );
    return { ...d, group: viewOf(await groupIn(reader, a.zone, i.folder)) };
  },
});

export const setGroupRules = defineSyscall({
  name: 'group_rules',
  group: 'groups',
  summary: "Replace a group's grant rules (operators only); its socket applies them when it next opens",
  input: z.object({ folder, rules }),
  output: z.object({ group: groupView }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/rules' },
  cli: {
    command: ['group', 'rules'],
    positional: ['folder'],
    examples: ['warren group rules main/research --rules \'["allow:send_*","deny:send_document"]\''],
  },
  async handler(ctx, i) {
    if (socketGroup(ctx.principal) !== null) throw forbidden('group_rules is for operators');
    for (const r of i.rules) parseRule(r);
    const row = await groups(ctx).tables.write(async (tx) => {
      await groupIn(tx.db, ctx.principal.zone, i.folder);
      await tx.db
        .updateTable('groups')
        .set({ rules: JSON.stringify(i.rules), updated_at: tx.now })
        .where('folder', '=', i.folder)
        .execute();
      tx.append({
        zone: ctx.principal.zone,
        type: 'group.rules_set',
        actor: principalId(ctx.principal),
        payload: { folder: i.folder, rules: i.rules },
      });
      return groupIn(tx.db, ctx.principal.zone, i.folder);
    });
    return { group: viewOf(row) };
  },
});
