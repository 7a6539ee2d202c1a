import { forbidden, invalid } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { depthOf, within } from './names.ts';
import { tierOf } from './tiers.ts';

/**
 * Who acts in a group tool. A group's socket calls as the operator `group:<folder>` of the
 * group's zone (its identity is the socket path, never its input); an operator (CLI, REST,
 * the zone socket) acts over the whole zone, or as a group when it names one in `group`.
 */
const PREFIX = 'group:';

export const groupPrincipal = (folder: string, zone: string): Principal => ({
  kind: 'operator',
  name: `${PREFIX}${folder}`,
  zone,
});

export interface Actor {
  /** The acting group, or null for an operator over its zone. */
  folder: string | null;
  zone: string;
  /** 0 for operators (everything in their zone). */
  tier: number;
  /** The name in the log. */
  id: string;
}

/** The group a principal is the socket of, or null. */
export const socketGroup = (p: Principal): string | null =>
  p.kind === 'operator' && p.name.startsWith(PREFIX) ? p.name.slice(PREFIX.length) : null;

/** The acting group: the socket's (its `group` input is ignored), else an operator's `group`, else none. */
export function actorOf(p: Principal, group?: string): Actor {
  if (p.kind !== 'operator')
    throw forbidden('group tools are called through a group socket or by an operator');
  const folder = socketGroup(p) ?? group ?? null;
  return { folder, zone: p.zone, tier: folder === null ? 0 : tierOf(depthOf(folder)), id: principalId(p) };
}

/** The acting group, for tools that act as one (send_reply, delegate_to_parent …). */
export function needGroup(a: Actor, tool: string): string {
  if (a.folder === null) throw invalid(`${tool} acts as a group: name it in group`, { field: 'group' });
  return a.folder;
}

/** Whether the actor reaches `folder`: its own subtree (operators: their zone's every group). */
export const reaches = (a: Actor, folder: string): boolean => a.folder === null || within(folder, a.folder);

export function mustReach(a: Actor, folder: string, what: string): void {
  if (!reaches(a, folder)) {
    throw forbidden(`${what}: ${folder} is outside group ${a.folder}'s subtree`);
  }
}
