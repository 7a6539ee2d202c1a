import { createHash } from 'node:crypto';
import type { Store } from '../store/store.ts';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';

const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const LOGIN_TOKEN_TTL_MS = 60 * 60 * 1000;
/** A bound on what one server holds, so logins in a loop cannot grow memory without limit. */
const MAX_ENTRIES = 10_000;

interface Entry {
  /** The operator whose key opened it: each request re-checks that name still holds a key. */
  operator: string;
  expiresAt: number;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Browser logins of one warren: cookie token -> operator name, and one-time login tokens
 * (the URL `warren serve` prints). Nothing here decides what a caller may do: a cookie only
 * names an operator, and the request then runs as that operator principal, the same one its
 * key would give. Cookie sessions live in the database (`ui_sessions`, by a hash of the token),
 * so a restart or another node on the same PostgreSQL keeps them; login tokens live in the
 * memory of the process that printed them.
 */
export class BrowserSessions {
  private readonly loginTokens = new Map<string, Entry>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** A new cookie session for an operator already authenticated by key or login token. */
  async open(operator: string): Promise<{ id: string; maxAgeSeconds: number }> {
    const id = `wcs_${this.ids.secret(32)}`;
    await this.store.writer.write(async (tx) => {
      // Expired rows go as new ones come: the table holds live logins and little else.
      await tx.db.deleteFrom('ui_sessions').where('expires_at', '<=', tx.now).execute();
      await tx.db
        .insertInto('ui_sessions')
        .values({ token_hash: hashOf(id), operator, created_at: tx.now, expires_at: tx.now + SESSION_TTL_MS })
        .execute();
    });
    return { id, maxAgeSeconds: SESSION_TTL_MS / 1000 };
  }

  /** The operator behind a live cookie, or null (unknown, expired or logged out). */
  async operatorOf(id: string | undefined): Promise<string | null> {
    if (!id || id.length > 200) return null;
    const row = await this.store.reader
      .selectFrom('ui_sessions')
      .select('operator')
      .where('token_hash', '=', hashOf(id))
      .where('expires_at', '>', this.clock.now())
      .executeTakeFirst();
    return row?.operator ?? null;
  }

  async close(id: string | undefined): Promise<void> {
    if (!id || id.length > 200) return;
    await this.store.writer.write(async (tx) => {
      await tx.db.deleteFrom('ui_sessions').where('token_hash', '=', hashOf(id)).execute();
    });
  }

  /** A token that opens one cookie session, once, within the hour. */
  mintLoginToken(operator: string): string {
    this.prune(this.loginTokens);
    const token = `wlt_${this.ids.secret(32)}`;
    this.loginTokens.set(token, { operator, expiresAt: this.clock.now() + LOGIN_TOKEN_TTL_MS });
    return token;
  }

  /** Spends a login token: the operator it was minted for, or null. A second use fails. */
  redeem(token: string): string | null {
    const e = this.loginTokens.get(token);
    this.loginTokens.delete(token);
    if (!e || e.expiresAt <= this.clock.now()) return null;
    return e.operator;
  }

  private prune(map: Map<string, Entry>): void {
    const now = this.clock.now();
    for (const [k, e] of map) if (e.expiresAt <= now) map.delete(k);
    // Still full of live entries: drop the oldest (Map keeps insertion order).
    while (map.size >= MAX_ENTRIES) {
      const first = map.keys().next().value;
      if (first === undefined) break;
      map.delete(first);
    }
  }
}
