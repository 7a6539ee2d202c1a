import type { Coordinator } from '../../src/plugins/coordinator/coordinator.ts';
import type { StoreLocation } from '../../src/store/dialect.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import type { Clock } from '../../src/util/clock.ts';
import type { Log } from '../../src/util/log.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import type { WarrenTarget } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the tests that read them
type Any = any;

/** A warren with the coordinator loaded behind HTTP, its plugin settings overridden. */
export async function coordinatorWarren(
  target: WarrenTarget,
  config: Record<string, unknown> = {},
  opts: { kernel?: Record<string, unknown>; log?: Log; clock?: Clock; location?: StoreLocation } = {},
): Promise<HttpWarren> {
  return startHttp(target, {
    plugins: { config: { coordinator: config } },
    ...(opts.kernel ? { kernel: opts.kernel } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.location ? { location: opts.location } : {}),
  });
}

/** Rows of a coordinator table (tests read them straight). */
export async function rows(
  h: HttpWarren,
  table: 'coordinator_agents' | 'coordinator_outbox',
): Promise<Any[]> {
  return (h.warren.store.reader as Any).selectFrom(table).selectAll().execute();
}

export const spawnBody = (extra: Record<string, unknown> = {}) => ({ application_id: 'app1', ...extra });

/** The coordinator's own tables: events are enqueued in its unit, as its syscalls do. */
export const outbox = (w: Warren) => w.plugins.get<Coordinator>('coordinator').tables;
