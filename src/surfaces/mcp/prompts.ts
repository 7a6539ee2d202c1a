import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  McpError,
  type Prompt,
  type PromptMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { CompletionSource } from './completion.ts';
import { asMcpError } from './resources.ts';
import { uri } from './uris.ts';

/** Longest argument value a prompt takes (a goal is prose; ids and names are short). */
const MAX_ARG = 16 * 1024;

interface PromptArg {
  name: string;
  description: string;
  required?: boolean;
  /** Where `completion/complete` finds values for it. */
  complete?: CompletionSource;
}

interface PromptDef {
  name: string;
  title: string;
  description: string;
  arguments: PromptArg[];
  /** Listed only for callers that may call all of these tools (and, if set, of this kind). */
  requires: string[];
  callers?: Principal['kind'];
  render(ctx: PromptContext, args: Record<string, string>): Promise<PromptMessage[]>;
}

interface PromptContext {
  warren: Warren;
  principal: Principal;
  /** The tools the caller may call. */
  tools: ReadonlySet<string>;
}

const user = (text: string): PromptMessage => ({ role: 'user', content: { type: 'text', text } });

/**
 * Prompt templates that teach warren's model: fds, pipes, SIGCHLD, reaping. Each one is
 * offered only to callers that may call the tools it tells them to use.
 */
export const PROMPTS: PromptDef[] = [
  {
    name: 'orchestrate',
    title: 'Orchestrate: split a goal into child sessions',
    description:
      'Split a goal into parts, give each to a child session over a pipe, collect the results on SIGCHLD, close the children’s fds and report.',
    arguments: [
      { name: 'goal', description: 'What the children together must achieve', required: true },
      { name: 'persona', description: 'A persona the children run as (optional)', complete: 'personas' },
      { name: 'task', description: 'A task to break down into subtasks (optional)', complete: 'tasks' },
    ],
    requires: ['ipc_spawn', 'ipc_write', 'ipc_read', 'ipc_wait', 'ipc_close'],
    async render({ warren, principal, tools }, args) {
      const tasks = warren.plugins.has('orchestration') && tools.has('task_create');
      const lines = [
        `Goal: ${args.goal}`,
        '',
        'You act in warren, an agent kernel that runs agent sessions the way an operating system runs processes. Split the goal into independent parts and give each part to a child session:',
        '',
        `1. Spawn one child per part with ipc_spawn: a prompt that says everything the child needs (it sees nothing of yours), a short title, pipe: "async"${args.persona ? `, persona: ${JSON.stringify(args.persona)}` : ''}. The answer gives the child's session id and two fds you now hold on it: pipeFd, your end of its pipe, and lifecycleFd, its lifecycle (signals about it).`,
        '2. Write instructions and follow-ups to a child with ipc_write on its pipeFd. The child answers on its fd 1, the other end of that pipe: read with ipc_read on the pipeFd (on an async pipe new messages are also pushed to you as input).',
        '3. When a child becomes idle or stops you receive SIGCHLD with its id, status and last message. ipc_wait on its lifecycleFd blocks until that happens; it returns within a bounded time — if it timed out, call it again.',
        '4. Check each result against its part; send corrections on the pipe and wait again.',
        '5. When a child is done, close your fds on it with ipc_close (pipeFd, then lifecycleFd). A session lives while it is held: closing the last fd on it reaps it. ipc_close refuses while messages are undelivered on that fd: read them first.',
        principal.kind === 'session'
          ? '6. Report the combined result on your own fd 1 with ipc_write (your parent reads it there), then stop: going idle sends your parent SIGCHLD with your last message.'
          : '6. Report the combined result.',
      ];
      if (tasks) {
        lines.push(
          '',
          'The orchestration plugin is loaded: for parts that must outlive you, depend on each other, be retried or be reviewed, create tasks with task_create (a DAG with dependencies, review and escalation) instead of spawning directly; warren dispatches a session for each ready task and joins it to its parent task’s session by a pipe.',
        );
      }
      if (args.task) lines.push('', `Break down task ${args.task}: its subtasks are the parts.`);
      return [user(lines.join('\n'))];
    },
  },
  {
    name: 'review',
    title: 'Review a child’s work',
    description:
      'Read a child session’s last message and status, and decide: accept it (and close its fds) or send corrections on its pipe.',
    arguments: [
      { name: 'session', description: 'The child session to review', required: true, complete: 'sessions' },
    ],
    requires: ['session_show', 'ipc_write'],
    async render({ warren, principal }, args) {
      const id = args.session ?? '';
      const s = await warren.kernel.session(principal, id);
      const text = [
        `Review the work of session ${s.id}${s.title ? ` (“${s.title}”)` : ''}: it is ${s.status}${s.endReason ? ` (${s.endReason})` : ''}, after ${s.turns} turn(s).`,
        '',
        s.lastMessage === null
          ? 'It has not written anything yet: wait for its SIGCHLD (ipc_wait) before judging.'
          : `Its last message:\n\n<<<\n${s.lastMessage}\n>>>`,
        '',
        'Judge it against what you asked it to do, not against what it says it did.',
        `- If it falls short, write precise corrections to its pipe with ipc_write (the pipeFd you got from ipc_spawn; input wakes it) and ipc_wait for its next SIGCHLD. Its whole conversation is the transcript of pipe:${s.id} (streams_transcript, or the resource ${uri.transcript(`pipe:${s.id}`)}).`,
        '- If it is right, use it, and close your fds on it with ipc_close (its pipe, then its lifecycle): closing the last fd on a session reaps it.',
      ].join('\n');
      return [
        user(text),
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: uri.session(s.id),
              mimeType: 'application/json',
              text: JSON.stringify({ session: s }),
            },
          },
        },
      ];
    },
  },
  {
    name: 'wrap-up',
    title: 'Wrap up: close your fds and report',
    description: 'Finish: read what is pending, close the fds you no longer need, report on fd 1 and stop.',
    arguments: [{ name: 'summary', description: 'What the report must cover (optional)' }],
    requires: ['ipc_list_fds', 'ipc_close', 'ipc_write'],
    callers: 'session',
    async render({ warren, principal }, args) {
      const fds = await warren.kernel.listFds(principal);
      const list = fds.map(
        (f) =>
          `- fd ${f.fd}: ${f.streamName} (${f.permission}, ${f.deliveryMode}${f.pending ? `, ${f.pending} pending` : ''})`,
      );
      const text = [
        'Wrap up your work.',
        '',
        'Your open fds:',
        ...list,
        '',
        '1. Read anything still pending (ipc_read): ipc_close refuses while messages are undelivered on an fd.',
        '2. Close the fds you hold on your children and on streams you no longer need (ipc_close). Closing the last fd on a child reaps it; a child you leave running is adopted by your parent when you end (unless it was spawned with another parentClose).',
        '3. Keep fds 0–2 (your stdin, your pipe to your parent, your lifecycle): your parent holds their other ends and decides when you are done.',
        `4. Write your report on fd 1 with ipc_write${args.summary ? `, covering: ${args.summary}` : ': what you did, what you found, what is left'}.`,
        '5. Then stop. Going idle sends your parent SIGCHLD with your last message.',
      ].join('\n');
      return [user(text)];
    },
  },
];

const visibleTo = (d: PromptDef, p: Principal, tools: ReadonlySet<string>) =>
  (!d.callers || d.callers === p.kind) && d.requires.every((t) => tools.has(t));

const toPrompt = (d: PromptDef): Prompt => ({
  name: d.name,
  title: d.title,
  description: d.description,
  arguments: d.arguments.map(({ complete: _, ...a }) => a),
});

/** The completion source of a prompt's argument, if it has one. */
export function promptArgSource(prompt: string, arg: string): CompletionSource | undefined {
  return PROMPTS.find((d) => d.name === prompt)?.arguments.find((a) => a.name === arg)?.complete;
}

/** `prompts/list` and `prompts/get` for one connection. */
export function registerPrompts(server: Server, warren: Warren, principal: Principal): void {
  const tools = () => new Set(warren.gate.visible(principal).map((s) => s.name));
  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const mine = tools();
    return { prompts: PROMPTS.filter((d) => visibleTo(d, principal, mine)).map(toPrompt) };
  });
  server.setRequestHandler(GetPromptRequestSchema, async (req): Promise<GetPromptResult> => {
    const { name, arguments: given = {} } = req.params;
    const mine = tools();
    const def = PROMPTS.find((d) => d.name === name && visibleTo(d, principal, mine));
    if (!def) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const args: Record<string, string> = {};
    for (const a of def.arguments) {
      const v = given[a.name];
      if (v === undefined || v === '') {
        if (a.required) throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${a.name}`);
        continue;
      }
      if (v.length > MAX_ARG)
        throw new McpError(
          ErrorCode.InvalidParams,
          `Argument ${a.name} is longer than ${MAX_ARG} characters`,
        );
      args[a.name] = v;
    }
    try {
      return {
        description: def.description,
        messages: await def.render({ warren, principal, tools: mine }, args),
      };
    } catch (error) {
      throw asMcpError(error, { prompt: name });
    }
  });
}
