import type { PromptSource, PromptText } from '../../contract/resources.ts';
import type { FdInfo, SessionInfo } from '../../kernel/records.ts';
import { uri } from './uris.ts';

/** Every fd the caller holds, page by page through `ipc_list_fds` (a session holds few). */
async function allFds(call: (name: string, input: unknown) => Promise<unknown>): Promise<FdInfo[]> {
  const fds: FdInfo[] = [];
  let after: string | null = null;
  do {
    const page = (await call('ipc_list_fds', after === null ? {} : { after })) as {
      fds: FdInfo[];
      next: string | null;
    };
    fds.push(...page.fds);
    after = page.next;
  } while (after !== null);
  return fds;
}

const user = (text: string): PromptText => ({ role: 'user', content: { type: 'text', text } });

/**
 * Prompt templates that teach warren's model: fds, pipes, SIGCHLD, reaping. Each one is
 * offered only to callers that may call the tools it tells them to use.
 */
export const corePrompts: readonly PromptSource[] = [
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
    async render({ principal, tools }, args) {
      // task_create is in the caller's set only when the orchestration plugin is loaded.
      const tasks = tools.has('task_create');
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
    async render({ call }, args) {
      const id = args.session ?? '';
      const { session: s } = (await call('session_show', { id })) as { session: SessionInfo };
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
    async render({ call }, args) {
      const fds = await allFds(call);
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
