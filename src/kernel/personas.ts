import { isAbsolute } from 'node:path';
import type { PersonasTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { globMatch } from '../util/glob.ts';
import { parseJson } from '../util/json.ts';
import { looksLikeCredential } from '../util/redact.ts';
import { invalid, notFound, WarrenError } from '../vocab/errors.ts';
import {
  canonicalRoot,
  checkPatterns,
  keep,
  namedExecutables,
  realExecutable,
  type SpawnGrants,
  within,
} from './grants.ts';
import { prefixRange } from './listing.ts';
import type { Db } from './lookup.ts';
import type { Budget, ResolvedSpawnRequest, SpawnRequest } from './types.ts';

/**
 * Personas: named agent configurations of a zone (runtime, model, system prompt, tools and
 * grants, max turns, budget, environment, working directory). A spawn names one with
 * `personaId` and starts from it; the request narrows it further and never widens it. A
 * persona never gives a child more than its spawner holds: one that would is refused
 * (`widens_grant`), not quietly cut down, so whoever chose it learns it does not fit.
 */

/** What a persona holds besides its name, runtime, model and system prompt. */
export interface PersonaSettings {
  /** Allowlist: sessions of this persona call at most these tools. */
  tools?: string[];
  /** Tool groups its sessions get beside their job's defaults (never past what the spawner holds). */
  toolGroups?: string[];
  /** Tool rules and spawn grants, as a spawn's `grants`; `cwd` also bounds the session's own cwd. */
  grants?: NonNullable<SpawnRequest['grants']>;
  maxTurns?: number;
  budget?: Budget;
  env?: Record<string, string>;
  /** `{ VAR: secretName }`: names only, values stay in the secret store. */
  secretEnv?: Record<string, string>;
  /** Default working directory (absolute). */
  cwd?: string;
  /** Runtime-specific configuration (a script, a command line …), under the request's. */
  config?: Record<string, unknown>;
  /** Where its sessions run (`local`, `runner:<name>`) unless the spawn names another. */
  environmentId?: string;
}

export interface PersonaInput extends PersonaSettings {
  name: string;
  runtime: string;
  model?: string;
  systemPrompt?: string;
}

export interface Persona extends PersonaInput {
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

/** Letters, digits, `_`, `-` and `.` (like a secret's name): it is shown in listings, events and errors. */
export const PERSONA_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

const personaOf = (r: PersonasTable): Persona => ({
  name: r.name,
  runtime: r.runtime,
  ...(r.model !== null ? { model: r.model } : {}),
  ...(r.system_prompt !== null ? { systemPrompt: r.system_prompt } : {}),
  ...parseJson<PersonaSettings>(r.settings, {}),
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** Checks a persona's own shape (the syscall's schema checks types and sizes first). */
export function checkPersona(p: PersonaInput, knownRuntime: (name: string) => void): void {
  if (!PERSONA_NAME.test(p.name))
    throw invalid(`persona name ${JSON.stringify(p.name)}: 1-128 letters, digits, _, - or .`);
  knownRuntime(p.runtime);
  if (p.grants?.executables) checkPatterns(p.grants.executables);
  for (const path of [p.cwd, ...(p.grants?.cwd ?? [])]) {
    if (path !== undefined && !isAbsolute(path))
      throw invalid(`persona cwd ${JSON.stringify(path)} must be an absolute path`, { field: 'cwd' });
  }
  for (const variable of [...Object.keys(p.env ?? {}), ...Object.keys(p.secretEnv ?? {})]) {
    if (variable.startsWith('WARREN_')) throw invalid(`a persona may not set warren's own ${variable}`);
  }
  // A persona is shown to orchestrators; credentials go by name (secretEnv), never inline.
  for (const variable of Object.keys(p.env ?? {})) {
    if (looksLikeCredential(variable))
      throw invalid(
        `env ${variable} looks like a credential: store it as a secret and name it in secretEnv`,
        {
          field: 'env',
        },
      );
  }
}

/** Create a persona, or with `replace` create or replace it. */
export async function putPersona(
  tx: WriteTx,
  zone: string,
  p: PersonaInput,
  actor: string,
  replace: boolean,
): Promise<{ persona: Persona; created: boolean }> {
  const { name, runtime, model, systemPrompt, ...settings } = p;
  const existing = await personaRow(tx.db, zone, name);
  if (existing && !replace)
    throw new WarrenError(
      'name_taken',
      `persona ${JSON.stringify(name)} already exists (replace it with --replace)`,
      {
        what: 'persona',
        name,
      },
    );
  const row: PersonasTable = {
    zone,
    name,
    runtime,
    model: model ?? null,
    system_prompt: systemPrompt ?? null,
    settings: JSON.stringify(settings),
    created_by: existing?.created_by ?? actor,
    created_at: existing ? Number(existing.created_at) : tx.now,
    updated_at: tx.now,
  };
  if (existing) {
    const { zone: _z, name: _n, ...set } = row;
    await tx.db.updateTable('personas').set(set).where('zone', '=', zone).where('name', '=', name).execute();
  } else {
    await tx.db.insertInto('personas').values(row).execute();
  }
  tx.append({
    zone,
    type: existing ? 'persona.replaced' : 'persona.created',
    actor,
    payload: { name, runtime, model: row.model },
  });
  return { persona: personaOf(row), created: !existing };
}

export async function deletePersona(tx: WriteTx, zone: string, name: string, actor: string) {
  const r = await tx.db
    .deleteFrom('personas')
    .where('zone', '=', zone)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw notFound('persona', name);
  tx.append({ zone, type: 'persona.deleted', actor, payload: { name } });
  return { name, deleted: true };
}

function personaRow(db: Db, zone: string, name: string) {
  return db
    .selectFrom('personas')
    .selectAll()
    .where('zone', '=', zone)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** A persona of the zone, or `not_found` (another zone's personas do not exist for it). */
export async function getPersona(db: Db, zone: string, name: string): Promise<Persona> {
  const row = await personaRow(db, zone, name);
  if (!row) throw notFound('persona', name);
  return personaOf(row);
}

export async function listPersonas(db: Db, zone: string): Promise<Persona[]> {
  const rows = await db.selectFrom('personas').selectAll().where('zone', '=', zone).orderBy('name').execute();
  return rows.map(personaOf);
}

/** Names of the zone's personas that start with `prefix`, in name order, at most `limit` (one indexed range). */
export async function personaNames(db: Db, zone: string, prefix: string, limit: number): Promise<string[]> {
  const { from, to } = prefixRange(prefix);
  let q = db.selectFrom('personas').select('name').where('zone', '=', zone).where('name', '>=', from);
  if (to !== null) q = q.where('name', '<', to);
  const rows = await q.orderBy('name', 'asc').limit(limit).execute();
  return rows.map((r) => r.name).filter((n) => n.startsWith(prefix));
}

/** What the spawner holds: its tool set (null: any) and its spawn grants. */
export interface Held {
  tools: readonly string[] | null;
  grants: SpawnGrants;
}

/**
 * Everything in the persona the spawner does not hold: tools outside its set, runtimes,
 * executables, working directories and secrets outside its spawn grants.
 */
export function widening(p: Persona, held: Held): string[] {
  const out: string[] = [];
  if (held.tools) {
    const literalAllows = (p.grants?.allow ?? []).filter((a) => !a.includes('*'));
    for (const t of [...(p.tools ?? []), ...literalAllows])
      if (!held.tools.includes(t)) out.push(`tool ${t}`);
  }
  const g = held.grants;
  if (g.runtimes) {
    for (const r of [p.runtime, ...(p.grants?.runtimes ?? [])])
      if (!g.runtimes.includes(r)) out.push(`runtime ${r}`);
  }
  if (g.executables) {
    const bound = g.executables;
    for (const pattern of p.grants?.executables ?? [])
      if (!bound.some((b) => globMatch(b, pattern))) out.push(`executable ${pattern}`);
    const named = namedExecutables({ runtime: p.runtime, config: p.config ?? {}, env: p.env ?? {} });
    for (const e of named) {
      const real = realExecutable(e.path);
      if (!bound.some((b) => globMatch(b, real))) out.push(`executable ${real}`);
    }
  }
  if (g.cwd) {
    const bound = g.cwd;
    for (const root of [...(p.cwd ? [p.cwd] : []), ...(p.grants?.cwd ?? [])])
      if (!bound.some((b) => within(canonicalRoot(root, '/'), b))) out.push(`cwd ${root}`);
  }
  if (g.secrets) {
    for (const name of [...Object.values(p.secretEnv ?? {}), ...(p.grants?.secrets ?? [])])
      if (!g.secrets.includes(name)) out.push(`secret ${name}`);
  }
  if (g.network === 'none' && p.grants?.network === 'full') out.push('network full');
  return [...new Set(out)];
}

/**
 * The request a spawn with a persona really makes: the persona's settings, with the
 * request's over them where it may only narrow (a lower maxTurns or budget, a subset of
 * tools and grants) or is its own (the prompt is the task, the title, ttl, pipe). Refused
 * with `widens_grant` when the persona holds what the spawner does not.
 */
export async function applyPersona(
  db: Db,
  zone: string,
  req: SpawnRequest,
  held: Held,
): Promise<{ req: ResolvedSpawnRequest; persona: Persona | null }> {
  if (!req.personaId) return { req: { ...req, runtime: req.runtime ?? 'script' }, persona: null };
  const p = await getPersona(db, zone, req.personaId);
  if (req.runtime !== undefined && req.runtime !== p.runtime) {
    throw invalid(`persona ${p.name} runs ${p.runtime}, not ${req.runtime}`, { field: 'runtime' });
  }
  const widens = widening(p, held);
  if (widens.length > 0) {
    throw new WarrenError(
      'widens_grant',
      `persona ${p.name} would give the child more than its spawner holds: ${widens.join(', ')}`,
      { persona: p.name, widens },
    );
  }
  const env = { ...p.env, ...req.env };
  const secretEnv = { ...p.secretEnv, ...req.secretEnv };
  const grants = narrowGrants(p.grants, req.grants);
  const tools = p.tools && req.tools ? req.tools.filter((t) => p.tools?.includes(t)) : (req.tools ?? p.tools);
  const toolGroups = [...new Set([...(p.toolGroups ?? []), ...(req.toolGroups ?? [])])];
  const maxTurns = minOf(p.maxTurns, req.maxTurns);
  const budget = narrowBudget(p.budget, req.budget);
  const cwd = req.cwd ?? p.cwd ?? p.grants?.cwd?.[0];
  const model = req.model ?? p.model;
  const runner = req.runner ?? p.environmentId;
  return {
    persona: p,
    req: {
      ...req,
      runtime: p.runtime,
      config: { ...p.config, ...req.config },
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(Object.keys(secretEnv).length > 0 ? { secretEnv } : {}),
      ...(grants ? { grants } : {}),
      ...(tools ? { tools } : {}),
      ...(toolGroups.length > 0 ? { toolGroups } : {}),
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      ...(budget ? { budget } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(runner !== undefined ? { runner } : {}),
      ...(p.systemPrompt !== undefined ? { systemPrompt: p.systemPrompt } : {}),
      // The persona's own tool rules, applied before the request's (both only narrow).
      personaTools: { allowlist: p.tools, grants: p.grants },
      ...(p.grants?.cwd ? { cwdRoots: p.grants.cwd } : {}),
    },
  };
}

const minOf = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

function narrowBudget(p: Budget | undefined, r: Budget | undefined): Budget | undefined {
  if (!p || !r) return p ?? r;
  const out: Budget = {};
  for (const k of ['inputTokens', 'outputTokens', 'costUsd', 'turns', 'wallMs'] as const) {
    const v = minOf(p[k], r[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

type Grants = NonNullable<SpawnRequest['grants']>;

/**
 * The request's spawn grants within the persona's: each list the request gives is cut to
 * what the persona's covers; a list only one of them gives is taken as it is. Tool rules
 * (allow / deny) stay the request's: the persona's are applied on their own (personaTools).
 */
function narrowGrants(p: Grants | undefined, r: Grants | undefined): Grants | undefined {
  if (!p) return r;
  const out: Grants = { ...(r?.allow ? { allow: r.allow } : {}), ...(r?.deny ? { deny: r.deny } : {}) };
  const lists = {
    runtimes: (a: string, b: string) => a === b,
    executables: (a: string, b: string) => globMatch(b, a),
    cwd: (a: string, b: string) => within(canonicalRoot(a, '/'), b),
    secrets: (a: string, b: string) => a === b,
  } as const;
  for (const [field, covered] of Object.entries(lists) as Array<
    [keyof typeof lists, (a: string, b: string) => boolean]
  >) {
    const v = keep(r?.[field] ?? null, p[field] ?? null, covered);
    if (v !== null) out[field] = v;
  }
  // The lesser of the two: a persona without network keeps its sessions without it.
  const network = p.network === 'none' ? 'none' : (r?.network ?? p.network);
  if (network) out.network = network;
  return Object.keys(out).length > 0 ? out : undefined;
}
