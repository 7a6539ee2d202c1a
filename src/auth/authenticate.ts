import { WarrenError } from '../kernel/errors.ts';
import { DEFAULT_ZONE, type Principal } from '../kernel/principal.ts';
import { verifySessionToken } from '../kernel/spawn.ts';
import type { Warren } from '../warren.ts';
import { verifyOperatorKey } from './keys.ts';

/**
 * A bearer credential to a principal: an operator key (`wk_…`) or a session token
 * (`wst_…`, valid while its session has not stopped). Anything else is refused.
 */
export async function authenticate(
  warren: Warren,
  bearer: string | undefined,
  zone?: string,
): Promise<Principal> {
  if (!bearer)
    throw new WarrenError(
      'unauthenticated',
      'missing credentials: send "Authorization: Bearer <key or token>"',
    );
  if (bearer.startsWith('wst_')) {
    const id = verifySessionToken(warren.kernel.secret, bearer);
    if (!id) throw new WarrenError('unauthenticated', 'invalid session token');
    const row = await warren.store.reader
      .selectFrom('sessions')
      .select(['zone', 'depth', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new WarrenError('unauthenticated', 'invalid session token');
    if (row.status === 'stopped')
      throw new WarrenError('unauthenticated', `session ${id} has stopped; its token is no longer valid`);
    return warren.withTools({ kind: 'session', sessionId: id, zone: row.zone, depth: row.depth });
  }
  const name = await verifyOperatorKey(warren.store, bearer);
  if (!name) throw new WarrenError('unauthenticated', 'invalid API key');
  return { kind: 'operator', name, zone: zone || DEFAULT_ZONE };
}

export function bearerOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m?.[1];
}
