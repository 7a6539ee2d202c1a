import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { Warren } from '../../src/syscalls/warren.ts';
import type { WarrenTarget } from '../helpers/warrens.ts';
import { call, waitStatus } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

/** A fresh allowlisted root (canonical) with a work directory inside; removed after the file. */
export function workRoot(): { root: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-turns-')));
  const work = join(root, 'work');
  mkdirSync(work);
  after(() => rmSync(root, { recursive: true, force: true }));
  return { root, work };
}

export const ALL_MUTATIONS = ['sessions', 'questions', 'reports'];

/** A warren with the turns plugin set up for `root`. */
export const openBridge = (t: WarrenTarget, root: string, settings: Record<string, unknown> = {}) =>
  t.open({
    plugins: { config: { turns: { mutations: ALL_MUTATIONS, workdirRoots: [root], ...settings } } },
  });

/** A script agent that answers each input with `done: <input>` (one turn per prompt). */
export const echoAgent = { steps: [{ listen: { say: 'done: ${input.text}' } }] };

/**
 * A script session in `cwd`, adopted by the bridge. It is spawned with the turns group, so its
 * agent may ask questions and report (a session's tools are fixed at spawn; adoption adds none).
 */
export async function adopted(w: Warren, cwd: string, script: unknown = echoAgent): Promise<string> {
  const s: Any = await call(w, 'ipc_spawn', {
    runtime: 'script',
    cwd,
    config: { script },
    toolGroups: ['turns'],
  });
  await call(w, 'bridge_register_session', { session_id: s.session.id, allow_mutation: true });
  // Up and waiting for its first prompt, so each prompt a test sends is a turn of its own
  // (prompts sent while it starts would reach it as one batch).
  await waitStatus(w, s.session.id, 'idle');
  return s.session.id as string;
}

export const send = (
  w: Warren,
  session_id: string,
  prompt: string,
  extra: Record<string, unknown> = {},
): Promise<Any> => call(w, 'bridge_send_prompt', { session_id, prompt, allow_mutation: true, ...extra });

export const awaitTurn = async (w: Warren, turn_id: string, timeout_ms = 10_000): Promise<Any> =>
  (await call(w, 'bridge_await_turn', { turn_id, timeout_ms })).turn;
