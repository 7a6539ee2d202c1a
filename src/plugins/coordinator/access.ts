import { z } from 'zod';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';

/** A zone id in a path: what warren's zones allow. */
export const zoneId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a zone id is lowercase letters, digits, - or _ (at most 63)')
  .describe('The zone (a warren zone)');

/** Principals made from a bearer JWT carry this name prefix (auth/jwt.ts). */
export const JWT_PREFIX = 'jwt:';

/**
 * Whether `p` may act in `zone` through the coordinator: an operator key anywhere (it is
 * the warren's administrator), a JWT caller only in the zone its token names, a session
 * only in its own zone.
 */
export function requireZone(p: Principal, zone: string): void {
  if (p.kind === 'operator' && !p.name.startsWith(JWT_PREFIX)) return;
  if (p.zone !== zone) {
    throw new WarrenError('forbidden', `this credential is for zone ${p.zone}, not ${zone}`, {
      zone,
      credentialZone: p.zone,
    });
  }
}
