import { importJWK, type JWK, type JWTPayload, jwtVerify } from 'jose';
import { WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';

/** Bearer JWTs from an external issuer (Caracal's STS): see docs/coordinator.md. */
export interface JwtOptions {
  /** The issuer; its JWKS is at `{issuer}/.well-known/jwks.json` and `aud` must equal it. */
  issuer: string;
  /** A scope the token must carry (`scope`: space-separated, or `scp` as an array). */
  scope: string;
  /** Most keys kept (least recently used goes first). */
  cacheMax: number;
  /** The claim that names the token's zone. */
  zoneClaim: string;
  /** At most one JWKS fetch per this many ms for unknown kids (a flood of junk kids costs one fetch). */
  refetchCooldownMs?: number;
  now?: () => number;
}

/** Principals from a JWT are operators of the token's zone, named `jwt:<sub>`. */
export const JWT_PRINCIPAL_PREFIX = 'jwt:';

export const isJwtPrincipal = (p: Principal): boolean =>
  p.kind === 'operator' && p.name.startsWith(JWT_PRINCIPAL_PREFIX);

const ZONE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Whether a bearer looks like a JWS compact token (three base64url parts). */
export const looksLikeJwt = (bearer: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(bearer);

type Key = Awaited<ReturnType<typeof importJWK>>;

/**
 * Verifies bearer JWTs: signature against the issuer's JWKS (kept in a bounded LRU by kid,
 * fetched again when a token names a kid it does not hold), `iss` and `aud` equal to the
 * issuer, expiry, the scope, and a zone claim that must be a warren zone name.
 */
export class JwtVerifier {
  private readonly keys = new Map<string, Key>();
  private lastFetch = Number.NEGATIVE_INFINITY;
  private fetching: Promise<void> | undefined;

  constructor(private readonly opts: JwtOptions) {}

  get jwksUrl(): string {
    return `${this.opts.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`;
  }

  /** How many keys the cache holds (tests check its bound). */
  get cached(): number {
    return this.keys.size;
  }

  async verify(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (header) => this.key(header.kid), {
        issuer: this.opts.issuer,
        audience: this.opts.issuer,
        algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256', 'EdDSA'],
        ...(this.opts.now ? { currentDate: new Date(this.opts.now()) } : {}),
      }));
    } catch (error) {
      if (error instanceof WarrenError) throw error;
      const code = (error as { code?: string }).code ?? '';
      const why =
        code === 'ERR_JWT_EXPIRED'
          ? 'the token has expired'
          : code === 'ERR_JWT_CLAIM_VALIDATION_FAILED'
            ? `the token's ${(error as { claim?: string }).claim ?? 'claims'} claim is not accepted here`
            : 'the token is not valid';
      throw new WarrenError('unauthenticated', why);
    }
    const scopes =
      typeof payload.scope === 'string'
        ? payload.scope.split(' ')
        : Array.isArray(payload.scp)
          ? payload.scp.map(String)
          : [];
    if (!scopes.includes(this.opts.scope)) {
      throw new WarrenError('forbidden', `the token lacks the scope ${this.opts.scope}`, {
        scope: this.opts.scope,
      });
    }
    const zone = payload[this.opts.zoneClaim];
    if (typeof zone !== 'string' || !ZONE.test(zone)) {
      throw new WarrenError('forbidden', `the token has no usable ${this.opts.zoneClaim} claim (a zone)`);
    }
    const sub = typeof payload.sub === 'string' && payload.sub.length <= 200 ? payload.sub : 'unknown';
    return { kind: 'operator', name: `${JWT_PRINCIPAL_PREFIX}${sub}`, zone };
  }

  private async key(kid: string | undefined): Promise<Key> {
    if (!kid) throw new WarrenError('unauthenticated', 'the token has no kid');
    const hit = this.keys.get(kid);
    if (hit) {
      // Most recently used goes last.
      this.keys.delete(kid);
      this.keys.set(kid, hit);
      return hit;
    }
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastFetch >= (this.opts.refetchCooldownMs ?? 1000)) {
      this.fetching ??= this.fetchKeys(kid).finally(() => {
        this.fetching = undefined;
      });
      this.lastFetch = now;
      await this.fetching;
    } else if (this.fetching) await this.fetching;
    const fresh = this.keys.get(kid);
    if (!fresh)
      throw new WarrenError('unauthenticated', 'the token is signed with a key the issuer does not publish');
    return fresh;
  }

  /** Fetch the JWKS; `wanted` goes in last, so the bound never evicts the key just asked for. */
  private async fetchKeys(wanted: string): Promise<void> {
    let body: { keys?: JWK[] };
    try {
      const res = await fetch(this.jwksUrl, { signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`JWKS answered ${res.status}`);
      body = (await res.json()) as { keys?: JWK[] };
    } catch (error) {
      throw new WarrenError('unavailable', `cannot fetch the issuer's keys: ${(error as Error).message}`);
    }
    const keys = (body.keys ?? []).slice(0, 1000);
    keys.sort((a, b) => Number(a.kid === wanted) - Number(b.kid === wanted));
    for (const jwk of keys) {
      if (!jwk.kid || (jwk.use && jwk.use !== 'sig')) continue;
      try {
        const key = await importJWK(jwk, jwk.alg ?? defaultAlg(jwk));
        this.keys.delete(jwk.kid);
        this.keys.set(jwk.kid, key);
      } catch {
        // A key this verifier cannot use is skipped, not fatal for the others.
      }
      while (this.keys.size > this.opts.cacheMax) {
        const oldest = this.keys.keys().next().value as string;
        this.keys.delete(oldest);
      }
    }
  }
}

const defaultAlg = (jwk: JWK) =>
  jwk.kty === 'RSA' ? 'RS256' : jwk.kty === 'EC' ? 'ES256' : jwk.kty === 'OKP' ? 'EdDSA' : 'RS256';
