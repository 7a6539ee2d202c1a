import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import type { OrchestrationSelf } from './instance.ts';
import { addDeps, cancelTask, completeTask, createTask, deleteTask, startTask } from './ops.ts';
import { TASK_STATUSES } from './schema.ts';
import { taskDetail, taskInfo } from './tasks.ts';
import { spawnTemplate } from './template.ts';
import { listTasks, showTask, taskTree } from './views.ts';

/** The task syscalls: operators (CLI, REST) and orchestrator sessions (MCP tools) call the same ones. */

const self = (ctx: SyscallContext) => ctx.self as OrchestrationSelf;
const engine = (ctx: SyscallContext) => self(ctx).engine;
const tables = (ctx: SyscallContext) => self(ctx).tables;

const taskId = z.string().min(1).max(200).describe('A task id (`root`: your zone’s root task)');
const status = z.enum(TASK_STATUSES);

const info = z.object({
  id: z.string(),
  zone: z.string(),
  parentId: z.string().nullable(),
  title: z.string(),
  status,
  held: z.boolean(),
  review: z.boolean(),
  onFailure: z.enum(['fail', 'escalate']),
  personaId: z.string().nullable(),
  environment: z.string(),
  sessionId: z.string().nullable(),
  result: z.string().nullable(),
  reason: z.string().nullable(),
  attempts: z.number(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  endedAt: z.number().nullable(),
});
const detail = info.extend({
  prompt: z.string(),
  spawn: z.record(z.string(), z.unknown()),
  budget: z.record(z.string(), z.unknown()).nullable(),
});

/** A subtree's limits (shared with the budgets of spawns once they have a schema of their own). */

const depList = z.array(taskId).max(100);

export const taskCreate = defineSyscall({
  name: 'task_create',
  group: 'tasks',
  summary: 'Create a task: dispatched as a session once its dependencies are complete',
  description:
    "A task gets a session (spawned by its parent task's session, joined by a pipe) once every task in dependsOn is complete. Without parent it goes under your own task (a session's) or the root. review: its result waits for task_complete. onFailure 'escalate' opens an operator escalation when it fails. hold: created held; task_start releases it.",
  input: z.object({
    title: s.title.min(1).describe('A short name for the task'),
    prompt: z.string().describe('What the task is: the prompt of its sessions'),
    parent: taskId.optional().describe('Parent task (default: your own task, else the root)'),
    dependsOn: depList.optional().describe('Tasks that must complete first'),
    personaId: s.personaName
      .optional()
      .describe('A persona of your zone its sessions start from (persona_list)'),
    environment: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('Where its sessions run (a runner; default local)'),
    spawn: spawnTemplate
      .optional()
      .describe('What its sessions are spawned with (runtime, script, config, model, tools, grants …)'),
    budget: s.budget
      .optional()
      .describe("Limits for its sessions' subtree: inputTokens, outputTokens, costUsd, turns, wallMs"),
    review: s.optionalFlag.describe('Its result waits in review for task_complete'),
    onFailure: z
      .enum(['fail', 'escalate'])
      .optional()
      .describe('escalate: a failure opens an operator escalation'),
    hold: s.optionalFlag.describe('Create it held (task_start releases it)'),
  }),
  output: z.object({ task: detail, dependsOn: z.array(z.string()) }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks' },
  cli: {
    command: ['task', 'create'],
    positional: ['title'],
    examples: [
      'warren task create "write the summary" --prompt "Summarise notes.md" --spawn \'{"runtime":"claude-code"}\'',
      'warren task create join --prompt "merge the parts" --depends-on \'["task_a","task_b"]\' --review true',
    ],
  },
  async handler(ctx, i) {
    const r = await createTask(ctx.kernel, tables(ctx), ctx.principal, i);
    engine(ctx).poke(r.task.id);
    return { task: taskDetail(r.task), dependsOn: r.dependsOn };
  },
});

export const taskDepend = defineSyscall({
  name: 'task_depend',
  group: 'tasks',
  summary: 'Add dependencies to a task that has not started (a cycle is refused)',
  input: z.object({ id: taskId, dependsOn: depList.min(1).describe('Tasks that must complete first') }),
  output: z.object({ task: detail, dependsOn: z.array(z.string()) }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks/:id/depend' },
  cli: {
    command: ['task', 'depend'],
    positional: ['id'],
    examples: ['warren task depend task_join --depends-on \'["task_c"]\''],
  },
  async handler(ctx, i) {
    const r = await addDeps(tables(ctx), ctx.principal, i.id, i.dependsOn);
    engine(ctx).poke(r.task.id);
    return { task: taskDetail(r.task), dependsOn: r.dependsOn };
  },
});

export const taskList = defineSyscall({
  name: 'task_list',
  group: 'tasks',
  summary: 'List tasks with their dependencies (operators: the zone; sessions: their own subtree)',
  input: z.object({
    status: status.optional().describe('Only tasks in this status'),
    parent: taskId.optional().describe('Only the children of this task'),
    ...s.pageInput,
  }),
  output: z.object({
    tasks: z.array(info.extend({ dependsOn: z.array(z.string()).describe('The tasks this one waits for') })),
    next: s.nextCursor,
  }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/tasks' },
  cli: {
    command: ['task', 'list'],
    examples: ['warren task list --status running', 'warren task list --parent root'],
  },
  handler: (ctx, i) => listTasks(tables(ctx), ctx.principal, i),
});

export const taskShow = defineSyscall({
  name: 'task_show',
  group: 'tasks',
  summary: 'One task: its dependencies, children and latest session',
  input: z.object({ id: taskId }),
  output: z.object({
    task: detail,
    dependsOn: z.array(z.string()),
    children: z.array(z.string()),
    session: s.session.nullable(),
  }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/tasks/:id' },
  cli: { command: ['task', 'show'], positional: ['id'], examples: ['warren task show task_01j…'] },
  handler: (ctx, i) => showTask(ctx.kernel, tables(ctx), ctx.principal, i.id),
});

interface Node {
  task: z.infer<typeof info>;
  children: Node[];
}
const node: z.ZodType<Node> = z.lazy(() => z.object({ task: info, children: z.array(node) }));

export const taskTreeCall = defineSyscall({
  name: 'task_tree',
  group: 'tasks',
  summary: 'The task tree under a task (default the root), nested',
  input: z.object({ id: taskId.optional() }),
  output: z.object({ tree: node, truncated: z.boolean() }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/tasks/tree' },
  cli: {
    command: ['task', 'tree'],
    positional: ['id'],
    examples: ['warren task tree', 'warren task tree task_01j…'],
  },
  handler: (ctx, i) => taskTree(tables(ctx), ctx.principal, i.id),
});

export const taskStart = defineSyscall({
  name: 'task_start',
  group: 'tasks',
  summary: 'Release a held task, or retry a failed or cancelled one (a new attempt)',
  input: z.object({ id: taskId }),
  output: z.object({ task: info }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks/:id/start' },
  cli: { command: ['task', 'start'], positional: ['id'], examples: ['warren task start task_01j…'] },
  async handler(ctx, i) {
    const t = await startTask(tables(ctx), ctx.principal, i.id);
    engine(ctx).poke(t.id);
    return { task: taskInfo(t) };
  },
});

export const taskCancel = defineSyscall({
  name: 'task_cancel',
  group: 'tasks',
  summary: 'Cancel a task and the open tasks below it (their sessions get SIGTERM)',
  input: z.object({
    id: taskId,
    reason: z.string().max(2000).optional().describe('Why (shown to its lead)'),
  }),
  output: z.object({ task: info, cancelled: z.array(z.string()) }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks/:id/cancel' },
  cli: { command: ['task', 'cancel'], positional: ['id'], examples: ['warren task cancel task_01j…'] },
  async handler(ctx, i) {
    const r = await cancelTask(ctx.kernel, tables(ctx), ctx.principal, i.id, i.reason);
    return { task: taskInfo(r.task), cancelled: r.cancelled };
  },
});

export const taskComplete = defineSyscall({
  name: 'task_complete',
  group: 'tasks',
  summary: 'Complete a running task or approve one in review (its session is asked to stop)',
  description:
    "Operators, the parent task's session and the task's own session may complete it. result: default the session's last message.",
  input: z.object({
    id: taskId,
    result: z
      .string()
      .max(256 * 1024)
      .optional()
      .describe("The task's result (default: its session's last message)"),
  }),
  output: z.object({ task: info }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks/:id/complete' },
  cli: {
    command: ['task', 'complete'],
    positional: ['id', 'result'],
    examples: ['warren task complete task_01j… "looks good"'],
  },
  async handler(ctx, i) {
    return { task: taskInfo(await completeTask(ctx.kernel, tables(ctx), ctx.principal, i.id, i.result)) };
  },
});

export const taskDelete = defineSyscall({
  name: 'task_delete',
  group: 'tasks',
  summary: 'Delete a task (not the root, not one with children, not one that runs)',
  input: z.object({ id: taskId }),
  output: z.object({ id: z.string() }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'DELETE', path: '/v1/tasks/:id' },
  cli: { command: ['task', 'delete'], positional: ['id'], examples: ['warren task delete task_01j…'] },
  handler: (ctx, i) => deleteTask(tables(ctx), ctx.principal, i.id),
});

export const taskSyscalls = [
  taskCreate,
  taskDepend,
  taskList,
  taskShow,
  taskTreeCall,
  taskStart,
  taskCancel,
  taskComplete,
  taskDelete,
];
