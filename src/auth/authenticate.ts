import { verifyOperatorKey } from '../kernel/operator-keys.ts';
import type { Store } from '../store/store.ts';
import { WarrenError } from '../vocab/errors.ts';
import { DEFAULT_ZONE, type Principal } from '../vocab/principal.ts';
import { type JwtVerifier, looksLikeJwt } from './jwt.ts';
import type { OperatorKeyCache } from './key-cache.ts';
import type { TokenSigner } from './tokens.ts';

/** What authentication reads: the store, the token signer, and how a row's tools are derived. */
export interface Authority {
  store: Store;
  tokens: TokenSigner;
  toolsOf(tools: string | null, depth: number): readonly string[];
  /** Bearer JWTs of an external issuer, when configured. */
  jwt?: JwtVerifier | null;
  /** Live operator keys already verified, when this node may cache them (key-cache.ts). */
  operatorKeys?: OperatorKeyCache | null;
}

const unauthenticated = (message: string) => new WarrenError('unauthenticated', message);

/**
 * A bearer credential to a whole principal, in one query: an operator key (`wk_…`) or a
 * session token (`wst_…`, valid while its generation is the session's and the session has
 * not stopped) with its zone, depth and tools. Anything else is refused.
 */
export async function authenticate(
  auth: Authority,
  bearer: string | undefined,
  zone?: string,
): Promise<Principal> {
  if (!bearer) throw unauthenticated('missing credentials: send "Authorization: Bearer <key or token>"');
  // A session token has a JWT's three dot-separated parts too: its prefix decides first.
  if (auth.jwt && !bearer.startsWith('wst_') && looksLikeJwt(bearer)) return auth.jwt.verify(bearer);
  if (!bearer.startsWith('wst_')) {
    const name = await operatorOfKey(auth, bearer);
    if (!name) throw unauthenticated('invalid API key');
    return { kind: 'operator', name, zone: zone || DEFAULT_ZONE };
  }
  const claim = auth.tokens.verify(bearer);
  if (!claim) throw unauthenticated('invalid session token');
  const row = await auth.store.reader
    .selectFrom('sessions')
    .select(['zone', 'depth', 'status', 'tools', 'token_gen'])
    .where('id', '=', claim.sessionId)
    .executeTakeFirst();
  if (!row) throw unauthenticated('invalid session token');
  if (row.status === 'stopped')
    throw unauthenticated(`session ${claim.sessionId} has stopped; its token is no longer valid`);
  if ((row.token_gen ?? 0) !== claim.gen)
    throw unauthenticated(`this token of session ${claim.sessionId} was replaced when the session resumed`);
  return {
    kind: 'session',
    sessionId: claim.sessionId,
    zone: row.zone,
    depth: row.depth,
    tools: auth.toolsOf(row.tools, row.depth),
  };
}

/**
 * The operator a live key belongs to, or null: the one check of an operator key, for a bearer
 * credential and a browser's login alike (through the node's cache when it may keep one).
 */
export function operatorOfKey(auth: Authority, key: string): Promise<string | null> {
  return auth.operatorKeys ? auth.operatorKeys.verify(key) : verifyOperatorKey(auth.store, key);
}

export function bearerOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m?.[1];
}
