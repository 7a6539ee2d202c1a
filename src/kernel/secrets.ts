import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AgentSink } from '../runtimes/types.ts';
import type { WriteTx } from '../store/writer.ts';
import { scrubValues } from '../util/redact.ts';
import { notFound, WarrenError } from '../vocab/errors.ts';
import type { Core } from './core.ts';
import type { Db } from './lookup.ts';

/**
 * Named secrets: values an operator stores once and spawns reference by name
 * (`secretEnv: { ANTHROPIC_API_KEY: "anthropic" }`). A value is sealed (AES-256-GCM, bound to
 * its zone and name) before it reaches the store, is opened only when an agent starts, and
 * goes nowhere else: no event, listing, error message or argv ever holds it.
 */

const ALGORITHM = 'aes-256-gcm';
const VERSION = 'v1';

/** Seals and opens secret values with one key; the key itself never leaves it. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('a secrets key is 32 bytes');
    this.#key = Buffer.from(key);
  }

  /** `v1.<iv>.<tag>.<ciphertext>`; the zone and name are authenticated, so a row cannot be moved. */
  seal(zone: string, name: string, value: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv(ALGORITHM, this.#key, iv);
    cipher.setAAD(aad(zone, name));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(zone: string, name: string, sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw unreadable(name);
    try {
      const decipher = createDecipheriv(ALGORITHM, this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(zone, name));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw unreadable(name);
    }
  }
}

const aad = (zone: string, name: string) => Buffer.from(`${zone}\u0000${name}`, 'utf8');

// Never the cause's text: it says nothing useful and must not carry any of the value.
const unreadable = (name: string) =>
  new WarrenError(
    'internal',
    `secret ${JSON.stringify(name)} cannot be opened with this server's secrets key (was the key file replaced?)`,
    { what: 'secret', name },
  );

export interface SecretInfo {
  name: string;
  createdAt: number;
  updatedAt: number;
}

/** Store (or replace) a secret. The event names it; the value stays out of the log. */
export async function setSecret(
  tx: WriteTx,
  core: Core,
  zone: string,
  name: string,
  value: string,
  actor: string,
): Promise<{ name: string; created: boolean }> {
  const sealed = core.secretBox.seal(zone, name, value);
  const existing = await tx.db
    .selectFrom('secrets')
    .select('name')
    .where('zone', '=', zone)
    .where('name', '=', name)
    .executeTakeFirst();
  if (existing) {
    await tx.db
      .updateTable('secrets')
      .set({ value: sealed, updated_at: tx.now })
      .where('zone', '=', zone)
      .where('name', '=', name)
      .execute();
  } else {
    await tx.db
      .insertInto('secrets')
      .values({ zone, name, value: sealed, created_at: tx.now, updated_at: tx.now })
      .execute();
  }
  tx.append({ zone, type: 'secret.set', actor, payload: { name, created: !existing } });
  return { name, created: !existing };
}

export async function deleteSecret(
  tx: WriteTx,
  zone: string,
  name: string,
  actor: string,
): Promise<{ name: string; deleted: boolean }> {
  const r = await tx.db
    .deleteFrom('secrets')
    .where('zone', '=', zone)
    .where('name', '=', name)
    .executeTakeFirst();
  const deleted = Number(r.numDeletedRows) > 0;
  if (deleted) tx.append({ zone, type: 'secret.deleted', actor, payload: { name } });
  return { name, deleted };
}

/** Names and times only. */
export async function listSecrets(db: Db, zone: string): Promise<SecretInfo[]> {
  const rows = await db
    .selectFrom('secrets')
    .select(['name', 'created_at', 'updated_at'])
    .where('zone', '=', zone)
    .orderBy('name', 'asc')
    .execute();
  return rows.map((r) => ({
    name: r.name,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  }));
}

/** A spawn references only secrets that exist in its zone (checked in the spawn's transaction). */
export async function requireSecrets(
  tx: WriteTx,
  zone: string,
  secretEnv?: Record<string, string>,
): Promise<void> {
  const names = [...new Set(Object.values(secretEnv ?? {}))];
  if (names.length === 0) return;
  const found = await tx.db
    .selectFrom('secrets')
    .select('name')
    .where('zone', '=', zone)
    .where('name', 'in', names)
    .execute();
  const have = new Set(found.map((r) => r.name));
  for (const n of names) if (!have.has(n)) throw notFound('secret', n);
}

/**
 * The values behind a session's `secretEnv`, opened at agent start (and only there): the
 * environment variables to add. A secret deleted since the spawn fails the start by name.
 */
export async function resolveSecretEnv(
  core: Core,
  zone: string,
  secretEnv: Record<string, string> | undefined,
): Promise<{ env: Record<string, string>; values: Map<string, string> }> {
  const entries = Object.entries(secretEnv ?? {});
  const values = new Map<string, string>();
  if (entries.length === 0) return { env: {}, values };
  const names = [...new Set(entries.map(([, n]) => n))];
  const rows = await core.store.reader
    .selectFrom('secrets')
    .select(['name', 'value'])
    .where('zone', '=', zone)
    .where('name', 'in', names)
    .execute();
  const sealed = new Map(rows.map((r) => [r.name, r.value]));
  const env: Record<string, string> = {};
  for (const [variable, name] of entries) {
    const s = sealed.get(name);
    if (s === undefined) throw notFound('secret', name);
    env[variable] = core.secretBox.open(zone, name, s);
    values.set(name, env[variable]);
  }
  return { env, values };
}

/**
 * The sink of an agent that holds secrets: whatever it reports (output, tool calls and
 * results, activity, its exit's error and stderr) has their values replaced by
 * `[secret:<name>]` before it reaches the log, so an agent that echoes its key (a Bash tool
 * running `env`) does not write it there.
 */
export function scrubbingSink(sink: AgentSink, secrets: ReadonlyMap<string, string>): AgentSink {
  if (secrets.size === 0) return sink;
  const s = <T>(v: T): T => scrubValues(v, secrets);
  return {
    ...sink,
    output: (text) => sink.output(s(text)),
    event: (type, payload) => sink.event(type, s(payload)),
    activity: (text) => sink.activity(text === null ? null : s(text)),
    saveState: (state) => sink.saveState(s(state)),
    exit: (result) => sink.exit(s(result)),
  };
}
