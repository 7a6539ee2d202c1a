import { z } from 'zod';
import type { PluginInstance } from '../../contract/plugin.ts';
import type { SyscallContext } from '../../contract/syscall.ts';
import { forbidden } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { Policy } from './config.ts';
import type { TurnEngine } from './engine.ts';
import { namespaceOf } from './policy.ts';
import type { TurnsTables } from './schema.ts';
import type { CommitWaits } from './wait.ts';

export interface TurnsInstance extends PluginInstance {
  engine: TurnEngine;
  policy: Policy;
  /** Its own tables (the syscalls reach them through the instance). */
  tables: TurnsTables;
  /** Waits on committed events (`bridge_await_turn`). */
  commits: CommitWaits;
  /** The command line `start_session` runs for kind command when none is given. */
  sessionCommand: string | undefined;
}

export const turnsOf = (ctx: SyscallContext) => ctx.self as TurnsInstance;

/** The caller's namespace, checked against the bridge's. */
export const nsOf = (ctx: SyscallContext, i: { profile?: string | undefined; repo?: string | undefined }) =>
  namespaceOf(turnsOf(ctx).policy, {
    ...(i.profile !== undefined ? { profile: i.profile } : {}),
    ...(i.repo !== undefined ? { repo: i.repo } : {}),
  });

export const sessionId = z.string().min(1).max(128).describe('A coordinator session id (ses_…)');
export const turnId = z.string().min(1).max(128).describe('A turn id (turn_…)');
export const questionId = z.string().min(1).max(128).describe('A question id (quest_…)');
export const allowMutation = z
  .boolean()
  .optional()
  .describe('Consent for this mutating call: required (true) on top of the bridge’s mutation class');
export const namespace = {
  profile: z.string().max(128).optional().describe('Namespace: profile (default: the bridge’s)'),
  repo: z.string().max(128).optional().describe('Namespace: repository (default: the bridge’s)'),
};

/** Operators act in their namespace; a session only on itself. */
export function ownSessionOnly(p: Principal, id: string): void {
  if (p.kind === 'session' && p.sessionId !== id)
    throw forbidden('a session reports and asks for itself only');
}

const finalResponse = z
  .object({
    text: z.string().nullable(),
    format: z.string(),
    source: z.string(),
    artifact_path: z.string().nullable(),
    truncated: z.boolean(),
  })
  .nullable();

export const turnOut = z.object({
  schema_version: z.literal(1),
  turn_id: z.string(),
  session_id: z.string(),
  status: z.string(),
  prompt: z.string(),
  workflow: z.string().nullable(),
  final_response: finalResponse,
  evidence: z.array(z.string()),
  error: z.string().nullable(),
  blocker: z.string().nullable(),
  superseded_by: z.string().nullable(),
  created_by: z.string(),
  created_at: z.number(),
  started_at: z.number().nullable(),
  ended_at: z.number().nullable(),
});

export const questionOut = z.object({
  question_id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  text: z.string(),
  options: z.array(z.string()).nullable(),
  status: z.string(),
  answer: z.string().nullable(),
  answered_by: z.string().nullable(),
  created_at: z.number(),
  answered_at: z.number().nullable(),
});

export const reportOut = z.object({
  report_id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  status: z.string(),
  summary: z.string(),
  blocker: z.string().nullable(),
  evidence: z.array(z.string()),
  created_by: z.string(),
  created_at: z.number(),
});

export const sessionOut = z.object({
  session_id: z.string(),
  profile: z.string(),
  repo: z.string(),
  cwd: z.string(),
  kind: z.string(),
  mode: z.string(),
  tmux_target: z.string().nullable(),
  worktree: z.string().nullable(),
  project: z.string().nullable(),
  created_at: z.number(),
});

export const evidencePaths = z.array(z.string().min(1).max(1024)).max(50);
