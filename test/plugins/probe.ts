/**
 * A plugin made for tests: a table of its own, a syscall on every surface, a reconcile
 * phase and a commit subscriber, each recording what happened to it in `trace`.
 */
import { z } from 'zod';
import { definePlugin, type Plugin } from '../../src/contract/plugin.ts';
import { defineSyscall } from '../../src/contract/syscall.ts';
import { corePlugin } from '../../src/plugins/core/plugin.ts';

export interface ProbeTrace {
  events: string[];
  seen: number;
}

export function probePlugin(name: string, trace: ProbeTrace, opts: { dependsOn?: string[] } = {}): Plugin {
  const table = `${name}_rows`;
  const ping = defineSyscall({
    name: `${name}_ping`,
    group: 'operator',
    summary: `Ping the ${name} plugin`,
    input: z.object({ note: z.string().max(100).optional() }),
    output: z.object({ plugin: z.string(), rows: z.number(), greeting: z.string() }),
    callers: ['operator', 'session'],
    jobs: ['worker', 'orchestrator'],
    http: { method: 'POST', path: `/v1/${name}/ping` },
    cli: { command: [name, 'ping'] },
    handler: async (ctx, i) => {
      const self = ctx.self as { ping(note?: string): Promise<{ rows: number; greeting: string }> };
      return { plugin: name, ...(await self.ping(i.note)) };
    },
  });
  return definePlugin({
    name,
    version: '1.2.3',
    summary: `test plugin ${name}`,
    ...(opts.dependsOn ? { dependsOn: opts.dependsOn } : {}),
    config: z.strictObject({ greeting: z.string().default('hello') }),
    migrations: () => ({
      '001_rows': {
        async up(db) {
          await db.schema.createTable(table).addColumn('note', 'text').execute();
        },
      },
    }),
    syscalls: [ping],
    start(ctx) {
      trace.events.push(`start ${name}`);
      // biome-ignore lint/suspicious/noExplicitAny: the plugin's own table is not in the kernel's types
      const db = ctx.tables.reader as any;
      return {
        phases: [
          {
            name: 'tick',
            run: async () => {
              trace.events.push(`phase ${name}`);
            },
          },
        ],
        onCommit: (events) => {
          trace.seen += events.length;
        },
        async stop() {
          trace.events.push(`stop ${name}`);
        },
        async ping(note?: string) {
          await ctx.tables.write(async (tx) => {
            // biome-ignore lint/suspicious/noExplicitAny: as above
            await (tx.db as any)
              .insertInto(table)
              .values({ note: note ?? null })
              .execute();
            tx.append({ zone: 'default', type: `${name}.pinged`, actor: 'operator:test', payload: { note } });
          });
          const rows = await db.selectFrom(table).selectAll().execute();
          return { rows: rows.length, greeting: ctx.config.greeting };
        },
      };
    },
  }) as Plugin;
}

export const withProbes = (...plugins: Plugin[]) => [corePlugin as Plugin, ...plugins];
