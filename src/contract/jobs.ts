/**
 * What a caller is there for. Its default tool set follows from it (a syscall names the jobs
 * whose default set holds it, `Syscall.jobs`); anything else is asked for by tool group (the
 * syscall's `group`), at spawn for a session, per connection for an operator. Every tool a
 * model is shown costs tokens on every request, so a job's set is what the job needs.
 *
 * - `worker`: a session running a task (the task's own tools, replies on fd 1, findings).
 * - `orchestrator`: a session with no task of its own (spawned by an operator or by
 *   ipc_spawn): spawns and talks to children, creates tasks, shares knowledge.
 * - `operator`: an operator's MCP list (the CLI and REST reach every operator syscall).
 */
export const JOBS = ['worker', 'orchestrator', 'operator'] as const;
export type Job = (typeof JOBS)[number];

/** The jobs a session can have (an operator is one by being an operator). */
export const SESSION_JOBS = ['worker', 'orchestrator'] as const satisfies readonly Job[];
export type SessionJob = (typeof SESSION_JOBS)[number];

/** A session whose spawn names no job: one without a task. */
export const DEFAULT_SESSION_JOB: SessionJob = 'orchestrator';
