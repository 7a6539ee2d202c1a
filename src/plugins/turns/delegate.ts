import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { invalid } from '../../vocab/errors.ts';
import { principalId } from '../../vocab/principal.ts';
import { allowMutation, namespace, nsOf, sessionId, turnsOf } from './common.ts';
import { sendPrompt } from './ops.ts';
import { requireMutation } from './policy.ts';
import { type AGENT_KINDS, startInput, startSession } from './session-syscalls.ts';

/**
 * Delegation: start (or reuse) a session and send it one workflow-tagged turn. The tag is a
 * first line the agent reads (`[workflow: plan]`) and the turn's `workflow` field.
 */

const WORKFLOWS = {
  plan: 'Plan only: write the plan, change nothing.',
  execute: 'Execute: make the change and report what you did.',
  team: 'Team: split the work, coordinate, and report the combined result.',
} as const;
type Workflow = keyof typeof WORKFLOWS;

const delegate = (workflow: Workflow) =>
  defineSyscall({
    name: `bridge_delegate_${workflow}`,
    group: 'turns',
    summary: `Delegate a ${workflow} turn: start or reuse a session, send one ${workflow}-tagged prompt`,
    description:
      'session_id reuses a coordinator session; else kind and cwd start one (allowlist, optional worktree). Emits delegation.started. Mutation class: sessions.',
    input: z.object({
      task: z
        .string()
        .min(1)
        .max(256 * 1024)
        .describe('What to do'),
      session_id: sessionId.optional(),
      kind: startInput.kind.optional(),
      cwd: startInput.cwd.optional(),
      config: startInput.config,
      model: startInput.model,
      worktree: startInput.worktree,
      visible: startInput.visible,
      queue: z.boolean().optional().describe('Queue behind an active turn of a reused session'),
      allow_mutation: allowMutation,
      ...namespace,
    }),
    output: z.object({
      session_id: z.string(),
      turn_id: z.string(),
      status: z.string(),
      workflow: z.string(),
      artifacts: z.object({
        session_id: z.string(),
        root: z.string(),
        list_tool: z.string(),
        read_tool: z.string(),
      }),
    }),
    callers: ['operator'],
    http: { method: 'POST', path: `/v1/bridge/delegate/${workflow}` },
    handler: async (ctx, i) => {
      const t = turnsOf(ctx);
      requireMutation(t.policy, 'sessions', i.allow_mutation);
      const ns = nsOf(ctx, i);
      let sid = i.session_id;
      let root: string | undefined;
      if (sid === undefined) {
        if (i.kind === undefined || i.cwd === undefined)
          throw invalid('give session_id, or kind and cwd to start one');
        const s = await startSession(ctx, ns, {
          kind: i.kind as (typeof AGENT_KINDS)[number],
          cwd: i.cwd,
          title: `${workflow}: ${i.task.slice(0, 60)}`,
          config: i.config,
          model: i.model,
          worktree: i.worktree,
          visible: i.visible,
        });
        sid = s.session_id;
        root = s.cwd;
      }
      const prompt = `[workflow: ${workflow}] ${WORKFLOWS[workflow]}\n\n${i.task}`;
      const sent = await sendPrompt(ctx.kernel, t.tables, ctx.principal, ns, {
        session_id: sid,
        prompt,
        queue: i.queue,
        workflow,
      });
      if (sent.turn.status === 'active') t.engine.watch(sent.turn.id, sent.turn.zone, sent.turn.session_id);
      // Only an append: a unit that never isolates opens no transaction.
      await t.tables.write(
        async (tx) => {
          tx.append({
            zone: ctx.principal.zone,
            type: 'delegation.started',
            actor: principalId(ctx.principal),
            session_id: sid,
            payload: { workflow, session_id: sid, turn_id: sent.turn.id, ref: `turn:${sent.turn.id}` },
          });
        },
        { readsFirst: true },
      );
      return {
        session_id: sid,
        turn_id: sent.turn.id,
        status: sent.turn.status,
        workflow,
        artifacts: {
          session_id: sid,
          root: root ?? '.',
          list_tool: 'bridge_list_artifacts',
          read_tool: 'bridge_read_artifact',
        },
      };
    },
  });

export const delegateSyscalls = [delegate('plan'), delegate('execute'), delegate('team')];
