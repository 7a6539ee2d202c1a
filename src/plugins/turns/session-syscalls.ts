import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import { invalid, notFound, WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { allowMutation, namespace, nsOf, sessionId, sessionOut, turnsOf } from './common.ts';
import type { Policy } from './config.ts';
import type { Namespace } from './ops.ts';
import { allowedWorkdir, requireMutation, requireSafeId } from './policy.ts';
import { sessionRecord } from './records.ts';
import type { BridgeSessionsTable, TurnsTables } from './schema.ts';
import { newSession, paneAlive, paneCwd, TMUX_TARGET } from './tmux.ts';

/** Sessions a coordinator starts or adopts; each one in an allowlisted working directory. */

export const AGENT_KINDS = ['claude-code', 'codex', 'acp', 'command'] as const;

async function record(
  tables: TurnsTables,
  p: Principal,
  ns: Namespace,
  row: Omit<BridgeSessionsTable, 'zone' | 'profile' | 'repo' | 'created_by' | 'created_at'>,
  type: string,
): Promise<BridgeSessionsTable> {
  return tables.write(async (tx) => {
    const existing = await tx.db
      .selectFrom('turns_sessions')
      .select('session_id')
      .where('session_id', '=', row.session_id)
      .executeTakeFirst();
    if (existing)
      throw new WarrenError('conflict', `session ${row.session_id} is already a coordinator session`);
    const full: BridgeSessionsTable = {
      ...row,
      zone: p.zone,
      profile: ns.profile,
      repo: ns.repo,
      created_by: principalId(p),
      created_at: tx.now,
    };
    await tx.db.insertInto('turns_sessions').values(full).execute();
    tx.append({
      zone: p.zone,
      type,
      actor: principalId(p),
      session_id: row.session_id.startsWith('ses_') ? row.session_id : null,
      payload: {
        session_id: row.session_id,
        kind: row.kind,
        mode: row.mode,
        ref: `session:${row.session_id}`,
      },
    });
    return full;
  });
}

/** The working directory a warren session (one `p` may see) was spawned with. */
async function sessionCwd(kernel: Kernel, p: Principal, id: string): Promise<string> {
  await kernel.session(p, id);
  const cwd = await kernel.sessionCwd(id);
  if (cwd === null)
    throw invalid(`session ${id} has no working directory of its own to check against the allowlist`);
  return cwd;
}

export const bridgeRegisterSession = defineSyscall({
  name: 'bridge_register_session',
  group: 'turns',
  summary: 'Adopt a live warren session or tmux pane as a coordinator session (allowlist checked)',
  description:
    'session_id: a live warren session whose working directory is inside the allowlist. tmux_target: a live tmux pane (`name:window.pane` or `%N`) whose current path is inside the allowlist; its turns end by report_status only. Mutation class: sessions.',
  input: z
    .object({
      session_id: sessionId.optional(),
      tmux_target: z
        .string()
        .regex(TMUX_TARGET, 'not a tmux target')
        .optional()
        .describe('A live tmux pane (name:window.pane or %N)'),
      allow_mutation: allowMutation,
      ...namespace,
    })
    .refine(
      (i) => (i.session_id === undefined) !== (i.tmux_target === undefined),
      'give session_id or tmux_target',
    ),
  output: z.object({ session: sessionOut }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/bridge/sessions/register' },
  handler: async (ctx, i) => {
    const { kernel, principal } = ctx;
    const policy = turnsOf(ctx).policy;
    requireMutation(policy, 'sessions', i.allow_mutation);
    const ns = nsOf(ctx, i);
    if (i.session_id !== undefined) {
      const id = requireSafeId('session_id', i.session_id);
      const info = await kernel.session(principal, id);
      if (info.status === 'stopped') throw new WarrenError('session_stopped', `session ${id} is stopped`);
      const cwd = allowedWorkdir(policy, await sessionCwd(kernel, principal, id));
      const row = await record(
        turnsOf(ctx).tables,
        principal,
        ns,
        {
          session_id: id,
          cwd,
          kind: info.runtime,
          mode: 'warren',
          tmux_target: null,
          worktree: null,
          project: null,
          worktree_policy: null,
        },
        'coordinator.session_registered',
      );
      return { session: sessionRecord(row) };
    }
    const target = i.tmux_target as string;
    if (!(await paneAlive(target))) throw notFound('live tmux pane', target);
    const cwd = allowedWorkdir(policy, await paneCwd(target));
    const row = await record(
      turnsOf(ctx).tables,
      principal,
      ns,
      {
        session_id: kernel.ids.id('tmx'),
        cwd,
        kind: 'tmux',
        mode: 'tmux',
        tmux_target: target,
        worktree: null,
        project: null,
        worktree_policy: null,
      },
      'coordinator.session_registered',
    );
    return { session: sessionRecord(row) };
  },
});

const git = (cwd: string, args: string[]) =>
  new Promise<string>((resolve, reject) => {
    execFile('git', ['-C', cwd, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(invalid(`git ${args[0]}: ${String(stderr).trim() || error.message}`));
      else resolve(String(stdout).trim());
    });
  });

/**
 * A worktree for one session, beside the repository (`<repo>.worktrees/<name>`), on a new
 * branch; the repository's top level is the session's project identity.
 */
async function addWorktree(
  policy: Policy,
  cwd: string,
  name: string,
): Promise<{ path: string; project: string }> {
  const project = await git(cwd, ['rev-parse', '--show-toplevel']);
  const path = join(dirname(project), `${basename(project)}.worktrees`, name);
  mkdirSync(dirname(path), { recursive: true });
  await git(project, ['worktree', 'add', '-b', `coord/${name}`, path]);
  return { path: allowedWorkdir(policy, path), project };
}

export const startInput = {
  kind: z.enum(AGENT_KINDS).describe('The agent to start'),
  cwd: z.string().min(1).max(4096).describe('Its working directory (inside the allowed roots)'),
  title: z.string().max(200).optional().describe('A short name for it'),
  config: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The runtime's configuration (command line, model …)"),
  model: z.string().max(200).optional().describe('The model it runs'),
  worktree: z
    .union([z.literal(true), z.string().regex(/^[A-Za-z0-9._-]{1,64}$/)])
    .optional()
    .describe('true or a name: run in a new git worktree'),
  worktree_policy: z
    .enum(['keep', 'remove'])
    .optional()
    .describe('What happens to the worktree when the session stops (default keep)'),
  visible: z
    .boolean()
    .optional()
    .describe(
      "Run the agent's CLI in a detached tmux session an operator can watch (its turns end by report_status)",
    ),
};

export interface StartInput {
  kind: (typeof AGENT_KINDS)[number];
  cwd: string;
  title?: string | undefined;
  prompt?: string | undefined;
  config?: Record<string, unknown> | undefined;
  model?: string | undefined;
  worktree?: true | string | undefined;
  worktree_policy?: 'keep' | 'remove' | undefined;
  visible?: boolean | undefined;
}

const policyOf = (i: StartInput, worktree: string | null) =>
  worktree ? (i.worktree_policy ?? 'keep') : null;

/** The CLI a visible session runs when no command line is given. */
const VISIBLE_CLI: Record<string, string | undefined> = { 'claude-code': 'claude', codex: 'codex' };

/** Start an agent in an allowlisted directory (optionally its own worktree) and record it. */
export async function startSession(
  ctx: SyscallContext,
  ns: Namespace,
  i: StartInput,
): Promise<BridgeSessionsTable> {
  const { kernel, principal } = ctx;
  const t = turnsOf(ctx);
  let cwd = allowedWorkdir(t.policy, i.cwd);
  let worktree: string | null = null;
  let project: string | null = null;
  if (i.worktree !== undefined) {
    const name = i.worktree === true ? kernel.ids.id('wt') : i.worktree;
    const wt = await addWorktree(t.policy, cwd, name);
    cwd = wt.path;
    worktree = wt.path;
    project = wt.project;
  }
  let config = i.config;
  if (i.kind === 'command' && config?.command === undefined) {
    if (!t.sessionCommand)
      throw invalid('kind command needs config.command (or the bridge’s sessionCommand)');
    config = { ...config, command: t.sessionCommand };
  }
  if (i.visible) {
    const line = typeof config?.command === 'string' ? config.command : VISIBLE_CLI[i.kind];
    const argv = Array.isArray(config?.command)
      ? (config.command as string[])
      : line
        ? ['sh', '-c', line]
        : null;
    if (!argv) throw invalid(`a visible ${i.kind} session needs config.command`);
    const id = kernel.ids.id('tmx');
    await newSession(`warren-${id}`, cwd, argv);
    return record(
      t.tables,
      principal,
      ns,
      {
        session_id: id,
        cwd,
        kind: i.kind,
        mode: 'tmux',
        tmux_target: `warren-${id}:0.0`,
        worktree,
        project,
        worktree_policy: policyOf(i, worktree),
      },
      'coordinator.session_started',
    );
  }
  const spawned = await kernel.spawn(principal, {
    runtime: i.kind,
    cwd,
    // A bridge session asks its coordinator and reports to it (bridge_ask_question, …).
    toolGroups: ['turns'],
    ...(i.title !== undefined ? { title: i.title } : {}),
    ...(i.prompt !== undefined ? { prompt: i.prompt } : {}),
    ...(config !== undefined ? { config } : {}),
    ...(i.model !== undefined ? { model: i.model } : {}),
  });
  return record(
    t.tables,
    principal,
    ns,
    {
      session_id: spawned.session.id,
      cwd,
      kind: i.kind,
      mode: 'warren',
      tmux_target: null,
      worktree,
      project,
      worktree_policy: policyOf(i, worktree),
    },
    'coordinator.session_started',
  );
}

export const bridgeStartSession = defineSyscall({
  name: 'bridge_start_session',
  group: 'turns',
  summary:
    'Start an agent (claude-code, codex, acp or command) in an allowlisted directory, optionally in its own git worktree',
  description:
    'The working directory must be inside the allowlist. worktree: the session runs in a new git worktree of that repository (recorded with the repository as its project), kept when it ends. Mutation class: sessions.',
  input: z.object({
    ...startInput,
    prompt: z
      .string()
      .max(256 * 1024)
      .optional()
      .describe('A first prompt (a turn of its own is better: send_prompt)'),
    allow_mutation: allowMutation,
    ...namespace,
  }),
  output: z.object({ session: sessionOut }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/bridge/sessions' },
  handler: async (ctx, i) => {
    requireMutation(turnsOf(ctx).policy, 'sessions', i.allow_mutation);
    return { session: sessionRecord(await startSession(ctx, nsOf(ctx, i), i)) };
  },
});

export const sessionSyscalls = [bridgeRegisterSession, bridgeStartSession];
