import type { PluginInstance } from '../../src/contract/plugin.ts';
import type { Engine } from '../../src/plugins/orchestration/engine.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { call, type Ev, op, until } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

/** Script agents for tasks. */
export const says = (text: string) => ({ script: { steps: [{ say: text }] } });
/** Says `text`, then idles (a session that stays after its turn). */
export const saysThenIdles = (text: string) => ({ script: { steps: [{ say: text }, { wait: {} }] } });
/** Idles until told, then says `text` and ends. */
export const waitsThenSays = (text: string) => ({ script: { steps: [{ wait: {} }, { say: text }] } });
/** A script step that creates a task running `steps`, its result kept as `$<title with _ for ->`. */
export const createStep = (title: string, steps: unknown[], extra: Record<string, unknown> = {}) => ({
  call: {
    syscall: 'task_create',
    input: { title, prompt: `do ${title}`, spawn: { script: { steps } }, ...extra },
    as: title.replaceAll('-', '_'),
  },
});
/** Listens forever (a parent that stays). */
export const listens = { script: { steps: [{ listen: {} }] } };

export const task = async (w: Warren, id: string, who = op): Promise<Any> =>
  (await call(w, 'task_show', { id }, who)).task;

export const create = async (w: Warren, input: Record<string, unknown>, who = op): Promise<Any> =>
  (await call(w, 'task_create', { prompt: 'do it', ...input }, who)).task;

export const waitTask = (w: Warren, id: string, status: string, ms = 10_000): Promise<Any> =>
  until(
    async () => {
      const t = await task(w, id);
      return t.status === status ? t : null;
    },
    ms,
    `task ${id} to be ${status}`,
  );

/** The zone's log of one or more types, oldest first. */
export const logOf = async (w: Warren, ...types: string[]): Promise<Ev[]> => {
  const out: Ev[] = [];
  for (const type of types) out.push(...(await call(w, 'events', { type, limit: 10_000 })).events);
  return out.sort((a, b) => a.seq - b.seq);
};

export const engineOf = (w: Warren) =>
  w.plugins.get<{ engine: Engine } & PluginInstance>('orchestration').engine;

/** Expect a call to fail with a code (and a message matching `message`). */
export async function fails(p: Promise<unknown>, code: string, message?: RegExp): Promise<Error> {
  try {
    await p;
  } catch (error) {
    const e = error as Error & { code?: string };
    if (e.code !== code) throw new Error(`expected ${code}, got ${e.code}: ${e.message}`);
    if (message && !message.test(e.message))
      throw new Error(`message ${JSON.stringify(e.message)} !~ ${message}`);
    return e;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}
