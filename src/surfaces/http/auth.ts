import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate, bearerOf } from '../../auth/authenticate.ts';
import { WarrenError } from '../../kernel/errors.ts';
import type { Principal } from '../../kernel/principal.ts';
import type { Warren } from '../../warren.ts';

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
    const zone = req.headers['x-warren-zone'];
    const principal = await authenticate(
      warren,
      bearerOf(req.headers.authorization),
      zone as string | undefined,
    );
    if (zone !== undefined && (typeof zone !== 'string' || !ZONE.test(zone))) {
      throw new WarrenError('invalid_input', 'X-Warren-Zone must be lowercase letters, digits, - or _');
    }
    req.principal = principal;
  });
}

/** The principal the hook built; a route that runs without one is a wiring bug. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new WarrenError('internal', 'route ran without authentication');
  return req.principal;
}
