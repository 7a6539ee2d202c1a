import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';

/**
 * Named secrets, kept by operators. A value goes in (over REST, or `warren secrets set NAME`
 * from stdin) and never comes out: not through a syscall, a listing or the log. Spawns
 * reference secrets by name (`secretEnv`) and the agent gets the value in its environment.
 */

/** Letters, digits, `_`, `-` and `.`: a name is shown in listings and errors. */
export const secretName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a secret name is 1-128 letters, digits, _, - or .')
  .describe('A secret name');

/** An environment variable name. */
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name');

/** `{ VAR: secretName }`: the value of each secret becomes that variable in the agent's environment. */
export const secretEnv = z
  .record(envName, secretName)
  .describe('Environment variables filled from named secrets at agent start: { VAR: secretName }');

const secretInfo = z.object({ name: z.string(), createdAt: z.number(), updatedAt: z.number() });

export const secretsSet = defineSyscall({
  name: 'secrets_set',
  group: 'operator',
  summary: 'Store a named secret (the CLI reads the value from stdin)',
  description:
    'Store or replace a secret of your zone. The value is sealed before it is stored and is never shown again; spawns reference it by name with secretEnv.',
  // No `cli` binding: a value must never be a command-line argument (`warren secrets set` reads stdin).
  input: z.object({ name: secretName, value: z.string().min(1).max(65_536).describe('The secret value') }),
  output: z.object({ name: z.string(), created: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/secrets/:name' },
  handler: ({ kernel, principal }, i) => kernel.secretSet(principal, i.name, i.value),
});

export const secretsList = defineSyscall({
  name: 'secrets_list',
  group: 'operator',
  summary: "Your zone's secrets: names only",
  input: z.object({}),
  output: z.object({ secrets: z.array(secretInfo) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/secrets' },
  cli: { command: ['secrets', 'list'], examples: ['warren secrets list'] },
  handler: async ({ kernel, principal }) => ({ secrets: await kernel.secretList(principal) }),
});

export const secretsDelete = defineSyscall({
  name: 'secrets_delete',
  group: 'operator',
  summary: 'Delete a named secret',
  description:
    'Sessions that reference it keep running; they fail to start again (resume) until it is set anew.',
  input: z.object({ name: secretName }),
  output: z.object({ name: z.string(), deleted: z.boolean() }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/v1/secrets/:name' },
  cli: {
    command: ['secrets', 'delete'],
    positional: ['name'],
    examples: ['warren secrets delete anthropic'],
  },
  handler: ({ kernel, principal }, i) => kernel.secretDelete(principal, i.name),
});

export const secretSyscalls = [secretsSet, secretsList, secretsDelete];
