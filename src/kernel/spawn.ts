import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { parseJson } from '../util/json.ts';
import { WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import { childBudget, NO_BUDGET, parseIds } from './budget.ts';
import { checkNetworkAsk, type SessionContainment } from './containment.ts';
import type { KernelContext } from './context.ts';
import type { Core } from './core.ts';
import { childGrants, grantsOfRow, type NetworkGrant, UNRESTRICTED } from './grants.ts';
import { liveSessionRow, sessionById } from './lookup.ts';
import { applyPersona, type Held } from './personas.ts';
import { requireSecrets } from './secrets.ts';
import { checkSessionEnv } from './spawn-env.ts';
import { createStream, openFd } from './streams.ts';
import type { ResolvedSpawnRequest, SpawnRequest } from './types.ts';
import { ensureZone, initIdOf, isInit, lockZone, zoneLimits } from './zones.ts';

export type { SpawnRequest, ToolPolicy } from './types.ts';

export interface SpawnResult {
  session: SessionsTable;
  /** The spawner's fds on the child. */
  lifecycleFd: number;
  pipeFd: number;
  created: boolean;
}

/**
 * The one spawn path: the CLI, an agent's ipc_spawn, a plugin's dispatch all come here.
 * The persona and the grants are resolved once, here: what was checked is what is spawned.
 * Limits are checked in the same transaction as the insert (and under the zone's row lock
 * on PostgreSQL), so concurrent spawns cannot overshoot them. A refusal writes nothing.
 */
export async function spawnInTx(
  tx: WriteTx,
  core: KernelContext,
  spawner: Principal,
  asked: SpawnRequest,
): Promise<SpawnResult> {
  const zone = spawner.zone;
  await ensureZone(tx, zone);
  await lockZone(tx, zone);
  const spawnerId = principalId(spawner);

  const parentId = spawner.kind === 'session' ? spawner.sessionId : initIdOf(zone);
  const parent = await liveSessionRow(tx, parentId);
  // A session's child gets only allowlisted variables from it (a persona's env is the operator's).
  if (spawner.kind === 'session') {
    checkSessionEnv(
      [...Object.keys(asked.env ?? {}), ...Object.keys(asked.secretEnv ?? {})],
      core.config.envAllow,
    );
  }
  const { req, persona } = await applyPersona(
    tx.db,
    zone,
    withDefaultRuntime(asked, spawner, parent),
    heldBy(core, spawner, parent),
  );
  // What it may spawn in turn, and whether this spawn is within the spawner's grants: before
  // the runtime looks at anything, so a refused spawn learns nothing of the host (which
  // executables exist).
  const granted = childGrants(spawner, parent, req);
  // Where it runs: an unknown or offline environment, or a spec its runtime refuses, is a
  // typed error.
  const containment = validateWhere(core, req, granted.grants.network ?? null);

  if (asked.idempotencyKey) {
    const existing = await tx.db
      .selectFrom('sessions')
      .selectAll()
      .where('zone', '=', zone)
      .where('idempotency_key', '=', asked.idempotencyKey)
      .executeTakeFirst();
    if (existing)
      return { session: existing, ...(await spawnerFdsOn(tx, spawnerId, existing.id)), created: false };
  }

  const {
    maxDepth,
    maxChildren,
    maxSessionsPerZone: maxSessions,
  } = await zoneLimits(tx, zone, core.config.limits);
  const depth = parent.depth + 1;
  if (depth > maxDepth) {
    throw new WarrenError('limit_exceeded', `spawn would reach depth ${depth}; the limit is ${maxDepth}`, {
      limit: 'maxDepth',
      max: maxDepth,
    });
  }
  // init's children (operators' sessions) are bounded by the zone's limit alone.
  if (!isInit(parent.id)) {
    const children = await countLive(tx, { zone, parentId: parent.id });
    if (children >= maxChildren) {
      throw new WarrenError(
        'limit_exceeded',
        `${parent.id} already has ${children} live children; the limit is ${maxChildren}`,
        { limit: 'maxChildren', max: maxChildren },
      );
    }
  }
  const inZone = await countLive(tx, { zone });
  if (inZone >= maxSessions) {
    throw new WarrenError(
      'limit_exceeded',
      `zone ${zone} already has ${inZone} live sessions; the limit is ${maxSessions}`,
      { limit: 'maxSessionsPerZone', max: maxSessions },
    );
  }
  // Counted only for runtimes that have a limit, so other spawns pay nothing for it.
  const maxOfRuntime = core.config.limits.maxSessionsPerRuntime?.[req.runtime];
  if (maxOfRuntime !== undefined) {
    const ofRuntime = await countLive(tx, { zone, runtime: req.runtime });
    if (ofRuntime >= maxOfRuntime) {
      throw new WarrenError(
        'limit_exceeded',
        `zone ${zone} already has ${ofRuntime} live ${req.runtime} sessions; the limit is ${maxOfRuntime}`,
        { limit: 'maxSessionsPerRuntime', runtime: req.runtime, max: maxOfRuntime },
      );
    }
  }

  const tools = childTools(core, depth, parent, req);
  await requireSecrets(tx, zone, req.secretEnv);
  const id = core.ids.session();
  // Within what is left of every budget above it (and none of them spent).
  const budget = await childBudget(tx, parent, req.budget, id);
  const ancestors = isInit(parent.id) ? [] : [parent.id, ...parseIds(parent.ancestors)];
  const ttlSeconds = req.ttlSeconds ?? core.config.defaultTtlSeconds ?? null;
  const spec = {
    prompt: withContext(req.context?.text, req.prompt),
    config: req.config ?? {},
    cwd: granted.cwd,
    model: req.model ?? null,
    env: req.env ?? {},
    ...(req.systemPrompt !== undefined ? { systemPrompt: req.systemPrompt } : {}),
    ...(req.secretEnv ? { secretEnv: req.secretEnv } : {}),
    ...(req.wakeOnInput ? { wakeOnInput: req.wakeOnInput } : {}),
    containment,
  };
  const session: SessionsTable = {
    id,
    zone,
    parent_id: parent.id,
    depth,
    status: 'pending',
    end_reason: null,
    runtime: req.runtime,
    runner: req.runner ?? 'local',
    title: req.title ?? null,
    spec: JSON.stringify(spec),
    runtime_state: null,
    parent_close: req.parentClose ?? 'reparent',
    token_hash: null,
    idempotency_key: req.idempotencyKey ?? null,
    last_message: null,
    suspend_reason: null,
    term_deadline: null,
    expires_at: ttlSeconds ? tx.now + ttlSeconds * 1000 : null,
    max_turns: req.maxTurns ?? null,
    turns: 0,
    usage: '{}',
    created_at: tx.now,
    updated_at: tx.now,
    ended_at: null,
    end_detail: null,
    activity: null,
    tools: tools === null ? null : JSON.stringify(tools),
    grants:
      req.grants || req.tools
        ? JSON.stringify({ ...req.grants, ...(req.tools ? { allowlist: req.tools } : {}) })
        : null,
    spawn_grants: JSON.stringify(granted.grants),
    persona: persona?.name ?? null,
    model: spec.model,
    ...NO_BUDGET,
    budget: budget.budget ? JSON.stringify(budget.budget) : null,
    ancestors: ancestors.length > 0 ? JSON.stringify(ancestors) : null,
    budget_scope: budget.scope.length > 0 ? JSON.stringify(budget.scope) : null,
    budget_deadline: budget.deadline,
    reported_by: req.reportedBy ?? null,
  };
  await tx.db.insertInto('sessions').values(session).execute();
  tx.append({
    zone,
    type: 'session.spawned',
    actor: spawnerId,
    session_id: id,
    payload: {
      parent: parent.id,
      depth,
      runtime: session.runtime,
      runner: session.runner,
      title: session.title,
      prompt: req.prompt ?? null,
      ...(req.context ? { context: req.context.digest } : {}),
      pipe: req.pipe ?? 'detach',
      parentClose: session.parent_close,
      ...(persona ? { persona: persona.name } : {}),
      ...(spec.model ? { model: spec.model } : {}),
      ...(tools ? { tools } : {}),
      ...(budget.budget ? { budget: budget.budget } : {}),
      containment,
    },
  });

  // The child's plumbing, owned by the spawner: tearing the spawner down tears these down.
  const mk = (kind: 'lifecycle' | 'pipe' | 'stdin') =>
    createStream(tx, core.ids, {
      zone,
      name: `${kind}:${id}`,
      kind,
      owner: spawnerId,
      sessionId: id,
      actor: spawnerId,
    });
  const stdin = await mk('stdin');
  const pipe = await mk('pipe');
  const lifecycle = await mk('lifecycle');
  // The child's own ends, numbered like a Unix process's: 0 stdin, 1 its pipe, 2 lifecycle.
  const own = { zone, holder: id, actor: spawnerId, spawned: true, cursor: 0 };
  await openFd(tx, core.ids, { ...own, stream: stdin, perm: 'r', mode: 'async', num: 0 });
  await openFd(tx, core.ids, { ...own, stream: pipe, perm: 'rw', mode: 'async', num: 1 });
  await openFd(tx, core.ids, { ...own, stream: lifecycle, perm: 'rw', mode: 'detach', num: 2 });
  const mine = { zone, holder: spawnerId, actor: spawnerId, owned: true, spawned: true, cursor: 0 };
  const lfd = await openFd(tx, core.ids, { ...mine, stream: lifecycle, perm: 'rw', mode: 'detach' });
  const pfd = await openFd(tx, core.ids, { ...mine, stream: pipe, perm: 'rw', mode: req.pipe ?? 'detach' });

  tx.afterCommit(() => {
    // The row as inserted: the start need not read it back.
    core.effects.startAgent(id, 'start', session);
    if (budget.deadline !== null) core.effects.armBudgetDeadline(id, budget.deadline);
  });
  return { session, lifecycleFd: lfd.num, pipeFd: pfd.num, created: true };
}

/**
 * Without a runtime (and no persona to take one from), a spawn runs what its fields say —
 * `script` given: script; `command` given: command — else what its spawner runs: a session's
 * child gets its parent's runtime, model, runtime config (less a script of its own: that is
 * the session's program, like its prompt) and environment variables, so a claude-code parent
 * gets a claude-code child on the same model and MCP wiring. An operator's default is script.
 * Named secrets are not passed on (that takes a grant: give secretEnv).
 */
export function withDefaultRuntime(
  asked: SpawnRequest,
  spawner: Principal,
  parent: SessionsTable,
): SpawnRequest {
  if (asked.runtime !== undefined || asked.personaId !== undefined) return asked;
  if (asked.config?.script !== undefined) return { ...asked, runtime: 'script' };
  if (asked.config?.command !== undefined) return { ...asked, runtime: 'command' };
  if (spawner.kind !== 'session' || isInit(parent.id)) return asked;
  const own = parseJson<{ config?: Record<string, unknown>; env?: Record<string, string> }>(parent.spec, {});
  const { script: _script, file: _file, ...config } = own.config ?? {};
  const env = { ...own.env, ...asked.env };
  return {
    ...asked,
    runtime: parent.runtime,
    config: { ...config, ...asked.config },
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(asked.model === undefined && parent.model ? { model: parent.model } : {}),
  };
}

/**
 * What a spawn by `spawner` would be refused for, checked now and writing nothing: its
 * persona, its runtime (the default above), the spawner's grants and whether the runtime takes
 * the spec. A task checks the spawn it will use when it is created, not first at dispatch.
 */
export async function checkSpawn(
  core: KernelContext,
  spawner: Principal,
  asked: SpawnRequest,
): Promise<void> {
  const db = core.store.reader;
  const parentId = spawner.kind === 'session' ? spawner.sessionId : initIdOf(spawner.zone);
  const parent = await sessionById(db, parentId);
  if (!parent) {
    if (spawner.kind === 'session') await liveSessionRow({ db }, parentId);
    // A zone with no init yet: an operator is bound by nothing a row would say.
    const { req } = await applyPersona(db, spawner.zone, asked, { tools: null, grants: UNRESTRICTED });
    validateWhere(core, req, req.grants?.network ?? null);
    return;
  }
  if (parent.status === 'stopped') await liveSessionRow({ db }, parentId);
  const { req } = await applyPersona(
    db,
    spawner.zone,
    withDefaultRuntime(asked, spawner, parent),
    heldBy(core, spawner, parent),
  );
  const granted = childGrants(spawner, parent, req);
  validateWhere(core, req, granted.grants.network ?? null);
}

/**
 * The runtime, in the environment the request names, takes its spec; else a typed error.
 * Returns how it will be contained (refused `unavailable` when it cannot be, and must be).
 */
function validateWhere(
  k: KernelContext,
  req: ResolvedSpawnRequest,
  network: NetworkGrant | null,
): SessionContainment {
  checkNetworkAsk(req.grants?.network, k.config.containmentNetwork);
  const runner = req.runner ?? 'local';
  const spec = {
    prompt: req.prompt ?? null,
    config: req.config ?? {},
    cwd: req.cwd ?? null,
    model: req.model ?? null,
    env: req.env ?? {},
    ...(req.systemPrompt !== undefined ? { systemPrompt: req.systemPrompt } : {}),
  };
  k.supervisor.environments.runtime(runner, req.runtime).validate(spec);
  return k.supervisor.containmentFor(runner, req.runtime, spec, network);
}

/** What a spawner holds: the parent's tool set and, for a session, its spawn grants (operators: anything). */
function heldBy(core: Core, spawner: Principal, parent: SessionsTable): Held {
  return {
    tools: spawner.kind === 'operator' ? null : toolsOf(core, parent),
    grants: spawner.kind === 'operator' ? UNRESTRICTED : grantsOfRow(parent),
  };
}

/** A session's set: stored, or (init, or a session from before tools were stored) its tier's. */
function toolsOf(core: Core, row: SessionsTable): readonly string[] | null {
  if (row.tools !== null) return JSON.parse(row.tools) as string[];
  return row.depth === 0 ? null : core.toolPolicy({ depth: row.depth }, null);
}

/** The child's tools: its parent's set, narrowed by its persona's rules, then by the request's. */
function childTools(core: Core, depth: number, parent: SessionsTable, req: ResolvedSpawnRequest) {
  const spec = { depth, job: req.job, groups: req.toolGroups };
  let from = toolsOf(core, parent);
  if (req.personaTools) {
    const { allowlist, grants } = req.personaTools;
    from = core.toolPolicy(spec, from, allowlist, grants) ?? from;
  }
  return core.toolPolicy(spec, from, req.tools, req.grants);
}

async function spawnerFdsOn(tx: WriteTx, holder: string, child: string) {
  const rows = await tx.db
    .selectFrom('fds')
    .innerJoin('streams', 'streams.id', 'fds.stream_id')
    .select(['fds.num', 'streams.kind'])
    .where('fds.holder', '=', holder)
    .where('streams.session_id', '=', child)
    .where('fds.closed_at', 'is', null)
    .execute();
  return {
    lifecycleFd: rows.find((r) => r.kind === 'lifecycle')?.num ?? -1,
    pipeFd: rows.find((r) => r.kind === 'pipe')?.num ?? -1,
  };
}

/**
 * Live sessions in a zone, or under one parent there. init, the only session without a
 * parent, never counts. Answered from the live-sessions index alone (zone, parent_id).
 */
async function countLive(
  tx: WriteTx,
  f: { zone: string; parentId?: string; runtime?: string },
): Promise<number> {
  let q = tx.db.selectFrom('sessions').where('status', '!=', 'stopped').where('zone', '=', f.zone);
  q = f.parentId !== undefined ? q.where('parent_id', '=', f.parentId) : q.where('parent_id', 'is not', null);
  if (f.runtime !== undefined) q = q.where('runtime', '=', f.runtime);
  const row = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The first prompt a runtime gets: start context (when there is one) ahead of the prompt. */
const withContext = (context: string | undefined, prompt: string | undefined): string | null =>
  context ? (prompt ? `${context}\n\n${prompt}` : context) : (prompt ?? null);
