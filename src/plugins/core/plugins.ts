import { z } from 'zod';
import { optionalFlag } from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';
import { principalId } from '../../vocab/principal.ts';
import { directoryOf } from './instance.ts';

/** Plugins: which policy modules this database runs. Enablement takes effect on restart. */

const listing = z.object({
  name: z.string(),
  version: z.string(),
  summary: z.string(),
  required: z.boolean(),
  enabled: z.boolean(),
  loaded: z.boolean(),
  dependsOn: z.array(z.string()),
  loadedVersion: z.string().nullable(),
});

export const pluginList = defineSyscall({
  name: 'plugin_list',
  group: 'plugins',
  summary: 'Every plugin: enabled (the database says) and loaded (this server runs it)',
  input: z.object({}),
  output: z.object({ plugins: z.array(listing) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/plugins' },
  cli: { command: ['plugin', 'list'], examples: ['warren plugin list'] },
  handler: async (ctx) => ({ plugins: await directoryOf(ctx).list() }),
});

const toggled = listing.extend({
  restartRequired: z.boolean(),
  message: z.string(),
  alsoDisabled: z.array(z.string()).describe('The dependents disabled with it (withDependents)'),
});
const nameInput = z.object({ name: z.string().min(1).max(64).describe('The plugin') });

export const pluginEnable = defineSyscall({
  name: 'plugin_enable',
  group: 'plugins',
  summary: 'Enable an optional plugin (persisted; takes effect when the server restarts)',
  input: nameInput,
  output: toggled,
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/plugins/:name/enable' },
  cli: {
    command: ['plugin', 'enable'],
    positional: ['name'],
    examples: ['warren plugin enable orchestration'],
  },
  handler: (ctx, i) => directoryOf(ctx).toggle(i.name, true, principalId(ctx.principal)),
});

export const pluginDisable = defineSyscall({
  name: 'plugin_disable',
  group: 'plugins',
  summary: 'Disable an optional plugin (persisted; takes effect when the server restarts)',
  description:
    "A disabled plugin's tables and rows stay; its tools, routes and commands are gone after the restart (calling one is not_found).",
  input: nameInput.extend({
    withDependents: optionalFlag.describe('Disable the enabled plugins that depend on it too'),
  }),
  output: toggled,
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/plugins/:name/disable' },
  cli: {
    command: ['plugin', 'disable'],
    positional: ['name'],
    examples: ['warren plugin disable coordinator', 'warren plugin disable orchestration --with-dependents'],
  },
  handler: (ctx, i) =>
    directoryOf(ctx).toggle(i.name, false, principalId(ctx.principal), {
      withDependents: i.withDependents === true,
    }),
});

export const pluginSyscalls = [pluginList, pluginEnable, pluginDisable];
