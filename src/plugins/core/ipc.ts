import { z } from 'zod';
import { SESSION_JOBS } from '../../contract/jobs.ts';
import * as s from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';
import type { SpawnRequest } from '../../kernel/types.ts';
import { keysetPage } from '../../store/paging.ts';
import { secretEnv, secretName } from './secrets.ts';

/** Tool rules and spawn grants a spawn (or a persona) asks for: never more than the spawner holds. */
export const spawnGrantsInput = z
  .object({
    allow: z.array(z.string()).optional().describe('Tool names (globs) the child may call at most'),
    deny: z.array(z.string()).optional().describe('Tool names (globs) the child may not call'),
    runtimes: z.array(z.string()).max(64).optional().describe('Runtimes the child may spawn'),
    executables: z
      .array(z.string())
      .max(64)
      .optional()
      .describe(
        'Absolute globs over the real paths of executables the child may run (command, acp, CLI paths)',
      ),
    cwd: z.array(z.string()).max(64).optional().describe('Roots its children may work in'),
    secrets: z.array(secretName).max(256).optional().describe('Secret names it may pass on'),
    network: z.enum(['full', 'none']).optional().describe('Its network (none: warren only); default yours'),
  })
  .describe(
    'Tool rules (allow / deny on tool names, `*` wildcards, deny wins) and spawn grants (runtimes, executables, cwd, secrets, network); never more than you hold',
  );

/** The ipc_* group: what an agent uses to spawn, talk and listen. Operators may use them on their own fds. */

/** What a spawn is asked with (ipc_spawn's input; a task's spawn template is a part of it). */
export const spawnInput = z.object({
  prompt: z.string().optional().describe('The task for the child'),
  runtime: z
    .string()
    .optional()
    .describe(
      "How the agent runs: script (built-in, deterministic), command (any executable), claude-code, codex or acp. Default: its persona's; else script when `script` is given, command when `command` is; else your own runtime, model and config (an operator's: script)",
    ),
  pipe: s.deliveryMode
    .default('detach')
    .describe(
      'Your end of its pipe: sync (you ipc_read; with a prompt the call waits for its result), async (pushed to you), detach (read when you like)',
    ),
  waitMs: z.coerce
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "pipe sync: how long to block for the child's result (capped by the server's syncSpawnWaitMs, 50 s by default; 0: answer at once). Default: the cap when a prompt is given, else 0",
    ),
  title: s.title.optional().describe('A short name for it in listings'),
  script: z.unknown().optional().describe('For runtime=script: the script (object, JSON or YAML text)'),
  command: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('For runtime=command: the command line'),
  config: z.record(z.string(), z.unknown()).optional().describe('Runtime-specific configuration'),
  cwd: z.string().optional().describe('Its working directory (absolute)'),
  model: z.string().optional().describe('The model it runs (runtimes that take one)'),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Environment variables; pass credentials by name with secretEnv instead (inline ones are redacted in the log)',
    ),
  secretEnv: secretEnv.optional(),
  runner: z.string().optional().describe('Where it runs (environmentId); default local'),
  environmentId: z.string().optional().describe('Alias of runner'),
  personaId: s.personaName
    .optional()
    .describe(
      'Start from this persona of your zone (persona_list): its runtime, model, system prompt, tools, grants, limits and environment; what you give here narrows it',
    ),
  maxTurns: z.coerce.number().int().positive().optional().describe('It stops after this many model turns'),
  ttlSeconds: z.coerce.number().int().positive().optional().describe('It is stopped this long after spawn'),
  budget: s.budget.optional(),
  parentClose: z
    .enum(['reparent', 'terminate', 'sigterm'])
    .optional()
    .describe('What happens to it if you end on your own'),
  idempotencyKey: z.string().max(200).optional().describe('Spawn at most once per key'),
  wakeOnInput: z
    .enum(['operator', 'any', 'never'])
    .optional()
    .describe('Who wakes it by writing to it while it is suspended (default: operators)'),
  job: z
    .enum(SESSION_JOBS)
    .optional()
    .describe(
      "Its default tool set: orchestrator (default; ipc, tasks, knowledge) or worker (lean: reply, read, its task's tools)",
    ),
  toolGroups: z
    .array(z.string())
    .max(64)
    .optional()
    .describe("Tool groups it gets beside its job's (e.g. sessions, schedules); never more than you hold"),
  tools: z.array(z.string()).optional().describe('Allowlist: the child may call at most these tools'),
  grants: spawnGrantsInput.optional(),
});

export const ipcSpawn = defineSyscall({
  name: 'ipc_spawn',
  group: 'ipc',
  summary: 'Spawn a child session, with a pipe to it',
  description:
    "Spawn a child session. You get an fd on its lifecycle (rw, detach) and on its pipe with the mode you ask for: 'sync' — with a prompt, blocks until the child finishes its turn (bounded, 50 s by default) and gives its `result`; if not done by then, result.finished is false: wait again with ipc_wait; read later replies with ipc_read; 'async' — its replies are delivered to you between your turns; 'detach' (default) — fire-and-forget, read when you like. You own both fds: close them when you are done with the child (ipc_close; after a kill they read as already closed).",
  input: spawnInput,
  output: z.object({
    session: s.session,
    lifecycleFd: z.number(),
    pipeFd: z.number(),
    created: z.boolean(),
    result: z
      .object({
        finished: z
          .boolean()
          .describe('It finished in time (idle with nothing pending, or stopped); false: still running'),
        status: z.string().describe('Its status when the call answered'),
        endReason: z.string().nullable().describe('Why it stopped (exit, crash, …), if it did'),
        lastMessage: z.string().nullable().describe('Its last message'),
        output: z
          .array(s.message)
          .describe('What it wrote on its pipe so far: a copy, the pipe cursor does not move'),
        next: z.string().describe('What to do next (wait again, read, close)'),
      })
      .optional()
      .describe("pipe sync only, when the call blocked: the child's result"),
  }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/sessions' },
  cli: {
    command: ['spawn'],
    positional: ['prompt'],
    flags: { persona: 'personaId' },
    examples: [
      'warren spawn "coordinate two workers" --script @examples/demo.yaml --pipe async',
      'warren spawn --runtime command --command "python3 agent.py" --title helper',
      'warren spawn "review PR 12" --persona reviewer',
    ],
  },
  handler: async ({ kernel, principal, signal }, i) => {
    const { waitMs, ...spawn } = i;
    const out = await kernel.spawn(principal, spawnRequestOf(spawn));
    // Seed 000: a sync spawn blocks until the child finishes. Only with a prompt: a child
    // without one waits for what you write, which you cannot while this call blocks.
    const blockMs = i.pipe === 'sync' ? (waitMs ?? (i.prompt !== undefined ? undefined : 0)) : 0;
    if (blockMs === 0) return out;
    const result = await kernel.syncResult(
      principal,
      { pipeFd: out.pipeFd, lifecycleFd: out.lifecycleFd },
      { ...(blockMs !== undefined ? { waitMs: blockMs } : {}), ...(signal ? { signal } : {}) },
    );
    // The session as it is now, not as it was spawned.
    return { ...out, session: await kernel.session(principal, out.session.id), result };
  },
});

/**
 * The spawn request an `ipc_spawn`-shaped input stands for: `script` and `command` go into
 * the runtime's config, `environmentId` is `runner`, absent fields stay absent. Task dispatch
 * builds its requests here too.
 */
export function spawnRequestOf(i: Partial<z.output<typeof spawnInput>>): SpawnRequest {
  // waitMs is the sync call's own bound, not part of what is spawned.
  const { script, command, config, runner, environmentId, grants, waitMs: _wait, ...rest } = i;
  const req = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as SpawnRequest;
  const cfg: Record<string, unknown> = { ...(config ?? {}) };
  if (script !== undefined) cfg.script = script;
  if (command !== undefined) cfg.command = command;
  if (Object.keys(cfg).length > 0) req.config = cfg;
  const where = runner ?? environmentId;
  if (where !== undefined) req.runner = where;
  if (grants !== undefined)
    req.grants = Object.fromEntries(Object.entries(grants).filter(([, v]) => v !== undefined));
  return req;
}

export const ipcWrite = defineSyscall({
  name: 'ipc_write',
  group: 'ipc',
  summary: 'Write a message to a stream through an fd',
  description: 'Write a message to a child (or any stream) through an open fd you hold with w or rw.',
  input: z.object({
    fd: s.fdNumber,
    message: z.string().max(1_000_000).describe('The text to write'),
    data: z.unknown().optional().describe('Structured data sent along (any JSON)'),
  }),
  output: z.object({ seq: z.number() }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/fds/:fd/write' },
  cli: {
    command: ['fds', 'write'],
    positional: ['fd', 'message'],
    examples: ['warren fds write 3 "hello room"'],
  },
  handler: ({ kernel, principal }, i) => kernel.write(principal, i.fd, i.message, i.data),
});

export const ipcRead = defineSyscall({
  name: 'ipc_read',
  group: 'ipc',
  summary: 'Read what is due on an fd',
  description:
    'Read the messages past your cursor on an fd and advance it. With wait=true, blocks until a message arrives or a bounded time passes; then timedOut=true means "nothing yet, call again".',
  input: z.object({
    fd: s.fdNumber,
    wait: s.optionalFlag.describe('Block until a message arrives (bounded)'),
    waitMs: z.coerce.number().int().nonnegative().optional().describe('How long to wait at most (capped)'),
    limit: z.coerce.number().int().positive().max(1000).optional().describe('Max messages to return'),
  }),
  output: z.object({ messages: z.array(s.message), cursor: z.number(), timedOut: z.boolean() }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/fds/:fd/read' },
  cli: { command: ['fds', 'read'], positional: ['fd'], examples: ['warren fds read 3 --wait'] },
  handler: ({ kernel, principal, signal }, i) =>
    kernel.read(principal, i.fd, {
      ...(i.wait !== undefined ? { wait: i.wait } : {}),
      ...(i.waitMs !== undefined ? { waitMs: i.waitMs } : {}),
      ...(i.limit !== undefined ? { limit: i.limit } : {}),
      ...(signal ? { signal } : {}),
    }),
});

export const ipcClose = defineSyscall({
  name: 'ipc_close',
  group: 'ipc',
  summary: 'Close an fd',
  description:
    'Close an fd. Closing the last fd that holds a child reaps it (and the cascade runs down its tree). Refuses while messages are undelivered on the fd unless force=true (logged). An fd already closed (a kill of the child closed it) answers alreadyClosed=true.',
  input: z.object({
    fd: s.fdNumber,
    force: s.optionalFlag.describe('Close even with messages undelivered (logged)'),
  }),
  output: z.object({
    fd: z.number(),
    closed: z.boolean(),
    alreadyClosed: z.boolean().describe('It was closed before this call (by a kill, or an earlier close)'),
    undelivered: z.number(),
    reaped: z.array(z.string()),
  }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/fds/:fd/close' },
  cli: {
    command: ['fds', 'close'],
    positional: ['fd'],
    examples: ['warren fds close 3', 'warren fds close 3 --force'],
  },
  handler: ({ kernel, principal }, i) => kernel.close(principal, i.fd, { force: i.force ?? false }),
});

export const ipcWait = defineSyscall({
  name: 'ipc_wait',
  group: 'ipc',
  summary: 'Wait for a child to go idle or stop',
  description:
    'Wait until a child (by its pipe or lifecycle fd, or its session id) is idle with nothing pending, or has stopped. Returns at once if it already is; otherwise within a bounded time (well below client timeouts) with timedOut=true — then simply call again. Sends progress notifications while it waits.',
  input: z.object({
    fd: s.fdNumber.optional(),
    session: s.sessionId.optional(),
    waitMs: z.coerce
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('At most this long (capped by the kernel)'),
  }),
  output: z.object({
    session: z.string(),
    status: z.string(),
    endReason: z.string().nullable(),
    lastMessage: z.string().nullable(),
    timedOut: z.boolean(),
  }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/sessions/wait' },
  cli: {
    command: ['wait'],
    examples: ['warren wait --session ses_01j…', 'warren wait --fd 4 --wait-ms 5000'],
  },
  handler: ({ kernel, principal, signal }, i) =>
    kernel.waitChild(
      principal,
      {
        ...(i.fd !== undefined ? { fd: i.fd } : {}),
        ...(i.session !== undefined ? { session: i.session } : {}),
      },
      { ...(i.waitMs !== undefined ? { waitMs: i.waitMs } : {}), ...(signal ? { signal } : {}) },
    ),
});

export const ipcListFds = defineSyscall({
  name: 'ipc_list_fds',
  group: 'ipc',
  summary: 'List your open fds',
  description:
    'List your open fds. Owned fds (owned=true) are children you spawned: close them before you stop.',
  input: z.object({ ...s.pageInput }),
  output: z.object({ fds: z.array(s.fd), next: s.nextCursor }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/fds' },
  cli: { command: ['fds', 'list'], examples: ['warren fds list'] },
  handler: async ({ kernel, principal }, i) => {
    // One more than the page: whether there is a next one. The page is the query's, so a
    // holder of 20,000 fds pages through all of them (a slice of the first 500 stopped there).
    const limit = i.limit ?? s.DEFAULT_PAGE;
    const { items, next } = await keysetPage(limit, (n) =>
      kernel.listFds(principal, undefined, {
        limit: n,
        ...(i.after !== undefined ? { after: i.after } : {}),
      }),
    );
    return { fds: items, next };
  },
});

export const ipcTerminate = defineSyscall({
  name: 'ipc_terminate',
  group: 'ipc',
  summary: 'Send SIGTERM to a child through its fd',
  description:
    'Send a graceful SIGTERM to a child via its pipe or lifecycle fd. The child gets a [SIGTERM] message and is expected to wrap up and stop; past its grace period it is killed. The fd stays open — close it after.',
  input: z.object({ fd: s.fdNumber }),
  output: z.object({
    session: z.string(),
    signal: z.enum(['SIGTERM', 'SIGKILL']),
    deadline: z.number().nullable(),
  }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/fds/:fd/terminate' },
  handler: ({ kernel, principal }, i) => kernel.terminate(principal, i.fd),
});

export const ipcListStreams = defineSyscall({
  name: 'ipc_list_streams',
  group: 'ipc',
  summary: 'List streams with subscribers and buffer depth',
  description:
    'List active streams with their subscribers and message-buffer depth. A session sees only streams it is in. internal=true includes lifecycle/pipe/stdin plumbing.',
  input: z.object({
    internal: s.optionalFlag.describe('Also the plumbing: pipe:, lifecycle:, stdin: streams'),
    ...s.pageInput,
  }),
  output: z.object({ streams: z.array(s.streamListing), next: s.nextCursor }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/streams' },
  cli: { command: ['streams', 'list'], examples: ['warren streams list', 'warren streams list --internal'] },
  handler: async ({ kernel, principal }, i) => {
    // The page is cut in the database (one more row says whether another page follows): the
    // kernel's own default cap would otherwise end the list at 500 streams with no cursor.
    const limit = i.limit ?? s.DEFAULT_PAGE;
    const { items, next } = await keysetPage(limit, (n) =>
      kernel.listStreams(principal, {
        internal: i.internal ?? false,
        limit: n,
        ...(i.after !== undefined ? { after: i.after } : {}),
      }),
    );
    return { streams: items, next };
  },
});

export const ipcCreateStream = defineSyscall({
  name: 'ipc_create_stream',
  group: 'ipc',
  summary: 'Create a named stream',
  description:
    'Create a named stream for inter-session traffic and get an rw fd on it. selfEcho=true lets participants see their own messages (the chatroom case).',
  input: z.object({
    name: s.streamName,
    selfEcho: s.optionalFlag.describe('Writers also receive their own messages (a chat room)'),
  }),
  output: z.object({ stream: s.stream, fd: z.number() }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  handler: ({ kernel, principal }, i) => kernel.createStream(principal, i.name, i.selfEcho ?? false),
});

export const ipcAttach = defineSyscall({
  name: 'ipc_attach',
  group: 'ipc',
  summary: 'Grant another session onto a stream you hold',
  description:
    "Grant another session an fd on a stream you hold. You cannot grant more than you hold (attenuation). Write-only (w) requires deliveryMode 'detach'.",
  input: z.object({
    fd: s.fdNumber,
    targetSessionId: s.sessionId,
    permission: s.permission.default('rw'),
    deliveryMode: s.deliveryMode.default('async'),
  }),
  output: z.object({ fd: z.number(), stream: z.string(), target: z.string() }),
  callers: ['session', 'operator'],
  jobs: ['orchestrator', 'operator'],
  handler: ({ kernel, principal }, i) =>
    kernel.attach(principal, i.fd, i.targetSessionId, i.permission, i.deliveryMode),
});

export const ipcShareStream = defineSyscall({
  name: 'ipc_share_stream',
  group: 'ipc',
  summary: 'Share a stream with your parent',
  description:
    'Share a stream you hold with your parent: it gets an fd and a [stream-ref] notice. For sibling-to-sibling, share up to the parent, who can ipc_attach it onward. Reserved streams cannot be shared.',
  input: z.object({
    fd: s.fdNumber.optional(),
    streamName: z.string().optional().describe('Or the stream by name (one of fd / streamName)'),
    permission: s.permission.optional(),
    deliveryMode: s.deliveryMode.optional(),
  }),
  output: z.object({ parent: z.string(), parentFd: z.number(), stream: z.string() }),
  callers: ['session'],
  jobs: ['orchestrator'],
  handler: ({ kernel, principal }, i) =>
    kernel.share(
      principal,
      { ...(i.fd !== undefined ? { fd: i.fd } : {}), ...(i.streamName ? { streamName: i.streamName } : {}) },
      i.permission,
      i.deliveryMode,
    ),
});

export const ipcSyscalls = [
  ipcSpawn,
  ipcWrite,
  ipcRead,
  ipcWait,
  ipcClose,
  ipcListFds,
  ipcTerminate,
  ipcListStreams,
  ipcCreateStream,
  ipcAttach,
  ipcShareStream,
];
