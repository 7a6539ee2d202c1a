import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';

/** Zones: limits per tenant namespace, set without restarting anything. */

const limit = z.coerce.number().int().positive().nullable().optional();

export const zonesSetLimits = defineSyscall({
  name: 'zones_set_limits',
  group: 'operator',
  summary: "Set your zone's spawn limits (null clears one back to the server's)",
  description:
    'Limits of the zone you act in (X-Warren-Zone / --zone): deepest spawn, live children per parent, live sessions in the zone. Checked atomically with every spawn. Returns the limits now in force.',
  input: z.object({
    maxDepth: limit.describe('Deepest a session may be'),
    maxChildren: limit.describe('Live children per session'),
    maxSessionsPerZone: limit.describe('Live sessions in the zone'),
  }),
  output: z.object({
    zone: z.string(),
    limits: z.object({ maxDepth: z.number(), maxChildren: z.number(), maxSessionsPerZone: z.number() }),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/zone/limits' },
  cli: {
    command: ['zones', 'set-limits'],
    examples: [
      'warren zones set-limits --max-depth 4 --max-sessions-per-zone 500',
      'warren --zone team-a zones set-limits --max-children 20',
    ],
  },
  handler: ({ kernel, principal }, i) => kernel.setZoneLimits(principal, i),
});

export const zonesLimits = defineSyscall({
  name: 'zones_limits',
  group: 'operator',
  summary: "Your zone's spawn limits in force",
  input: z.object({}),
  output: zonesSetLimits.output,
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/zone/limits' },
  cli: { command: ['zones', 'limits'], examples: ['warren zones limits'] },
  handler: ({ kernel, principal }) => kernel.setZoneLimits(principal, {}),
});

export const zoneSyscalls = [zonesSetLimits, zonesLimits];
