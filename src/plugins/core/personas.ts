import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';
import { spawnGrantsInput } from './ipc.ts';
import { envName, secretEnv } from './secrets.ts';

/**
 * Personas: named agent configurations of a zone. Operators create and delete them;
 * orchestrators (tier 1) list and read them to choose one for a child (`ipc_spawn
 * personaId`). A persona holds no secret values: env names that look like credentials are
 * refused, and secretEnv maps variables to secret names.
 */

/** A list of names, as an array or one comma-separated string (`--tools ipc_write,ipc_read`). */
const nameList = z
  .union([z.array(z.string().min(1).max(128)).max(256), z.string().max(32_768)])
  .transform((v) =>
    Array.isArray(v)
      ? v
      : v
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
  );

const budget = z
  .object({
    inputTokens: z.number().int().nonnegative().optional(),
    outputTokens: z.number().int().nonnegative().optional(),
    costUsd: z.number().nonnegative().optional(),
    turns: z.number().int().nonnegative().optional(),
    wallMs: z.number().int().nonnegative().optional(),
  })
  .strict();

const personaFields = {
  runtime: z.string().min(1).max(64).describe('How its sessions run (a runtime this server has)'),
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The model its sessions run (a spawn may name another)'),
  systemPrompt: z
    .string()
    .optional()
    .describe('Given to the model as its system prompt (capped like a prompt)'),
  tools: nameList.optional().describe('Allowlist: its sessions call at most these tools'),
  toolGroups: nameList
    .optional()
    .describe(
      "Tool groups its sessions get beside their job's defaults (schedules, sessions …; docs/mcp.md)",
    ),
  grants: spawnGrantsInput.optional(),
  maxTurns: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe("Its sessions' turn limit (a spawn may lower it)"),
  budget: budget.optional().describe('Subtree limits: inputTokens, outputTokens, costUsd, turns, wallMs'),
  env: z.record(envName, z.string().max(8192)).optional().describe('Environment variables (no credentials)'),
  secretEnv: secretEnv.optional(),
  cwd: z.string().min(1).max(4096).optional().describe('Default working directory (absolute)'),
  config: z.record(z.string(), z.unknown()).optional().describe('Runtime-specific configuration'),
  environmentId: z
    .string()
    .min(1)
    .max(80)
    .optional()
    .describe('Where its sessions run: local or runner:<name> (a spawn may name another)'),
};

const persona = z.object({
  name: z.string(),
  ...personaFields,
  tools: z.array(z.string()).optional(),
  toolGroups: z.array(z.string()).optional(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
});

export const personaCreate = defineSyscall({
  name: 'persona_create',
  group: 'personas',
  summary: 'Create a persona (--replace to replace one)',
  description:
    'A persona is a named agent configuration of your zone: runtime, model, system prompt, tools and grants, max turns, budget, environment, working directory. Spawns start from it with personaId and may only narrow it. Sessions already spawned from a persona keep what they were spawned with.',
  input: z.object({
    name: s.personaName,
    ...personaFields,
    replace: s.optionalFlag.describe('Replace the persona of that name if there is one'),
  }),
  output: z.object({ persona, created: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/personas' },
  cli: {
    command: ['persona', 'create'],
    positional: ['name'],
    examples: [
      'warren persona create reviewer --runtime claude-code --model sonnet --system-prompt "You review diffs." --tools ipc_read,ipc_write --max-turns 20',
      'warren persona create reviewer --runtime claude-code --model opus --replace',
    ],
  },
  handler: ({ kernel, principal }, { replace, ...i }) => kernel.personaCreate(principal, i, replace ?? false),
});

export const personaList = defineSyscall({
  name: 'persona_list',
  group: 'personas',
  summary: "Your zone's personas",
  input: z.object({}),
  output: z.object({ personas: z.array(persona) }),
  callers: ['operator', 'session'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/personas' },
  cli: { command: ['persona', 'list'], examples: ['warren persona list'] },
  handler: async ({ kernel, principal }) => ({ personas: await kernel.personaList(principal) }),
});

export const personaShow = defineSyscall({
  name: 'persona_show',
  group: 'personas',
  summary: 'Show one persona',
  input: z.object({ name: s.personaName }),
  output: z.object({ persona }),
  callers: ['operator', 'session'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/personas/:name' },
  cli: { command: ['persona', 'show'], positional: ['name'], examples: ['warren persona show reviewer'] },
  handler: async ({ kernel, principal }, i) => ({ persona: await kernel.personaShow(principal, i.name) }),
});

export const personaDelete = defineSyscall({
  name: 'persona_delete',
  group: 'personas',
  summary: 'Delete a persona',
  description: 'Sessions spawned from it keep running with the configuration they were spawned with.',
  input: z.object({ name: s.personaName }),
  output: z.object({ name: z.string(), deleted: z.boolean() }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/v1/personas/:name' },
  cli: { command: ['persona', 'delete'], positional: ['name'], examples: ['warren persona delete reviewer'] },
  handler: ({ kernel, principal }, i) => kernel.personaDelete(principal, i.name),
});

export const personaSyscalls = [personaCreate, personaList, personaShow, personaDelete];
