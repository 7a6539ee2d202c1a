import { compileGlob, GlobTooLongError } from '../../util/glob.ts';
import { invalid } from '../../vocab/errors.ts';

/**
 * Seed 002's tool table: each tool and the deepest tier that has it. A group's tier is its
 * depth (0 root, 1 world, 2 agent, 3+ worker); a group has a tool when its tier is at most
 * the tool's.
 */
export const TOOL_TIERS = {
  send_message: 2,
  send_reply: 3,
  send_document: 2,
  clear_session: 1,
  inject_message: 0,
  register_group: 1,
  get_groups: 1,
  refresh_groups: 1,
  delegate_to_child: 1,
  delegate_to_parent: 2,
  spawn_group: 0,
  schedule_task: 1,
  get_task: 1,
  update_task: 1,
  cancel_task: 1,
  list_tasks: 1,
  list_routes: 1,
  set_routes: 1,
  add_route: 1,
  delete_route: 1,
} as const satisfies Record<string, 0 | 1 | 2 | 3>;

export type GroupTool = keyof typeof TOOL_TIERS;
export const GROUP_TOOLS = Object.keys(TOOL_TIERS) as GroupTool[];
export const TIER_LABELS = ['root', 'world', 'agent', 'worker'] as const;

export const tierOf = (depth: number): 0 | 1 | 2 | 3 => Math.min(depth, 3) as 0 | 1 | 2 | 3;

/**
 * A grant rule: `allow:<glob>` or `deny:<glob>` over tool names (`*` any run). With no
 * allow rule a group keeps its tier's tools; with some, only those an allow matches. A deny
 * always wins. Rules only narrow: nothing grants a tool above the group's tier.
 */
export interface GrantRule {
  effect: 'allow' | 'deny';
  tools: string;
}

export function parseRule(text: string): GrantRule {
  const m = /^(allow|deny):(.+)$/.exec(text);
  if (!m)
    throw invalid(`grant rule ${JSON.stringify(text.slice(0, 100))}: write allow:<glob> or deny:<glob>`, {
      field: 'rules',
    });
  try {
    compileGlob(m[2]!);
  } catch (error) {
    if (error instanceof GlobTooLongError) throw invalid(`grant rule: ${error.message}`, { field: 'rules' });
    throw error;
  }
  return { effect: m[1] as GrantRule['effect'], tools: m[2]! };
}

/** Why a group (of this tier or depth) may not call `tool`, or null when it may. */
export function refusal(tier: number, rules: readonly string[], tool: string): string | null {
  const min = (TOOL_TIERS as Record<string, number>)[tool];
  if (min === undefined) return `${tool} is not a group tool`;
  const t = tierOf(tier);
  if (t > min) return `${tool} needs tier ${min} or lower; this group is tier ${t} (${TIER_LABELS[t]})`;
  const parsed = rules.map(parseRule);
  const deny = parsed.find((r) => r.effect === 'deny' && compileGlob(r.tools)(tool));
  if (deny) return `${tool} is denied by the group's rule deny:${deny.tools}`;
  const allows = parsed.filter((r) => r.effect === 'allow');
  if (allows.length > 0 && !allows.some((r) => compileGlob(r.tools)(tool))) {
    return `${tool} matches none of the group's allow rules (${allows.map((r) => `allow:${r.tools}`).join(', ')})`;
  }
  return null;
}

/** The tools a group has: its tier's, narrowed by its rules. */
export const toolsOf = (tier: number, rules: readonly string[]): GroupTool[] =>
  GROUP_TOOLS.filter((t) => refusal(tier, rules, t) === null);
