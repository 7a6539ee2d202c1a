import type { Warren } from '../../src/syscalls/warren.ts';
import { call, op } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

export const post = async (
  w: Warren,
  title: string,
  body: string,
  extra: Record<string, unknown> = {},
  who = op,
): Promise<Any> => (await call(w, 'knowledge_post', { title, body, ...extra }, who)).finding;

export const search = async (w: Warren, input: Record<string, unknown>, who = op): Promise<Any[]> =>
  (await call(w, 'knowledge_search', input, who)).findings;

export const titles = (rows: Array<{ title: string }>) => rows.map((r) => r.title);
