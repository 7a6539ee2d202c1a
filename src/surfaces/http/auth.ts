import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, bearerOf } from '../../auth/authenticate.ts';
import type { Warren } from '../../syscalls/warren.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { cookieOf, SESSION_COOKIE } from './cookie.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, built once by the `onRequest` hook; routes marked public have none. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** No credentials needed (liveness). */
    public?: boolean;
  }
}

const ZONE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * The one authentication path of the HTTP surface (REST, SSE and MCP alike): every request
 * gets its whole principal in an `onRequest` hook, before its body is read or validated, so
 * a caller without credentials learns nothing but 401.
 */
export function registerAuth(app: FastifyInstance, warren: Warren): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config?.public) return;
    // A fenced node answers 503 before authenticating, which would read the database.
    warren.checkServing();
    const zone = req.headers['x-warren-zone'];
    const bearer = bearerOf(req.headers.authorization);
    const cookie = bearer ? undefined : cookieOf(req.headers.cookie, SESSION_COOKIE);
    const principal = cookie
      ? await cookiePrincipal(warren, req, cookie, zone as string | undefined)
      : await authenticate(warren, bearer, zone as string | undefined);
    if (zone !== undefined && (typeof zone !== 'string' || !ZONE.test(zone))) {
      throw new WarrenError('invalid_input', 'X-Warren-Zone must be lowercase letters, digits, - or _');
    }
    req.principal = principal;
  });
}

/** Methods that change nothing: a cross-site page may cause these, and learns nothing from them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser's cookie session as the operator principal its key gives (auth/browser-login.ts).
 * A state-changing request carrying the cookie must come from a page of this server (`Origin`
 * equal to its own): a page of another origin cannot drive warren, even where a browser would
 * send the cookie.
 */
async function cookiePrincipal(
  warren: Warren,
  req: FastifyRequest,
  cookie: string,
  zone: string | undefined,
): Promise<Principal> {
  if (!SAFE_METHODS.has(req.method) && !sameOrigin(req)) {
    throw new WarrenError(
      'forbidden',
      "cross-origin request refused: the session cookie works only from warren's own pages",
    );
  }
  return warren.browser.principal(cookie, zone);
}

/** The request's Origin is this server's own (scheme and the Host it was reached by). */
export function sameOrigin(req: FastifyRequest): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (typeof origin !== 'string' || !host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}

/** The principal the hook built; a route that runs without one is a wiring bug. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new WarrenError('internal', 'route ran without authentication');
  return req.principal;
}
