import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';

/** Operator keys: `wk_…` bearer credentials for the CLI and REST, stored hashed. */

const keyInfo = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.number(),
  revokedAt: z.number().nullable(),
});

export const keyCreate = defineSyscall({
  name: 'key_create',
  group: 'operator',
  summary: 'Create an operator key (shown once)',
  input: z.object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, 'a key name is letters, digits, _ . - (at most 63)')
      .describe('Who holds it: the operator name its calls are logged under'),
  }),
  output: z.object({ id: z.string(), name: z.string(), key: z.string(), createdAt: z.number() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/keys' },
  cli: { command: ['keys', 'create'], positional: ['name'], examples: ['warren keys create ci'] },
  handler: (ctx, i) => ctx.kernel.operatorKeyCreate(ctx.principal, i.name),
});

export const keyList = defineSyscall({
  name: 'key_list',
  group: 'operator',
  summary: 'List operator keys (never the keys themselves)',
  input: z.object({}),
  output: z.object({ keys: z.array(keyInfo) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/keys' },
  cli: { command: ['keys', 'list'], examples: ['warren keys list'] },
  handler: async (ctx) => ({ keys: await ctx.kernel.operatorKeyList() }),
});

export const keyRevoke = defineSyscall({
  name: 'key_revoke',
  group: 'operator',
  summary: 'Revoke an operator key (the last live one is kept)',
  input: z.object({ id: z.string().min(1).max(100).describe('The key id (key_list)') }),
  output: z.object({ id: z.string(), revoked: z.boolean() }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/v1/keys/:id' },
  cli: { command: ['keys', 'revoke'], positional: ['id'], examples: ['warren keys revoke key_…'] },
  handler: (ctx, i) => ctx.kernel.operatorKeyRevoke(ctx.principal, i.id),
});

export const keySyscalls = [keyCreate, keyList, keyRevoke];
