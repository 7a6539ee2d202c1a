import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall } from '../../contract/syscall.ts';

/** Process control: list, inspect, signal, feed, suspend and resume sessions. */

export const ps = defineSyscall({
  name: 'ps',
  group: 'sessions',
  summary: 'List sessions',
  description:
    'List live sessions in your zone (a session sees its children). all=true includes stopped ones.',
  input: z.object({ all: s.optionalFlag.describe('Also stopped sessions'), ...s.pageInput }),
  output: z.object({ sessions: z.array(s.session), next: s.nextCursor }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/sessions' },
  cli: { command: ['ps'], examples: ['warren ps', 'warren ps --all --json'] },
  handler: async ({ kernel, principal }, i) => {
    return kernel.ps(principal, {
      all: i.all ?? false,
      limit: i.limit ?? s.DEFAULT_PAGE,
      ...(i.after !== undefined ? { after: i.after } : {}),
    });
  },
});

export const sessionShow = defineSyscall({
  name: 'session_show',
  group: 'sessions',
  summary: 'Show one session',
  input: z.object({ id: s.sessionId }),
  output: z.object({ session: s.session }),
  callers: ['operator', 'session'],
  // An orchestrator reads its children's state and last message (the review prompt, warren://sessions/…).
  jobs: ['orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/sessions/:id' },
  cli: { command: ['session', 'show'], positional: ['id'], examples: ['warren session show ses_01j…'] },
  handler: async ({ kernel, principal }, i) => ({ session: await kernel.session(principal, i.id) }),
});

export const kill = defineSyscall({
  name: 'kill',
  group: 'sessions',
  summary: 'Stop a session: SIGKILL, or SIGTERM with --graceful',
  description:
    'Without graceful: SIGKILL — the session stops at once, its process is disposed, its fds close and what it owns is torn down (its children are reaped in turn). With graceful: SIGTERM — a [SIGTERM] message asks it to wrap up; past the grace period the kernel sends SIGKILL. A session with no live agent is killed at once.',
  input: z.object({
    id: s.sessionId,
    graceful: s.optionalFlag.describe('SIGTERM (wrap up, then SIGKILL past the grace) instead of SIGKILL'),
  }),
  output: z.object({
    id: z.string(),
    signal: z.enum(['SIGTERM', 'SIGKILL']),
    deadline: z.number().nullable(),
  }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'POST', path: '/v1/sessions/:id/kill' },
  cli: {
    command: ['kill'],
    positional: ['id'],
    examples: ['warren kill ses_01j…', 'warren kill ses_01j… --graceful'],
  },
  handler: ({ kernel, principal }, i) => kernel.kill(principal, i.id, { graceful: i.graceful ?? false }),
});

export const send = defineSyscall({
  name: 'send',
  group: 'sessions',
  summary: "Send text to a session's stdin",
  description:
    'Inject input: the text is written to the session’s stdin stream and delivered at its next safe point.',
  input: z.object({
    id: s.sessionId,
    text: z.string().min(1).max(1_000_000).describe('The input to send it'),
  }),
  output: z.object({ seq: z.number() }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'POST', path: '/v1/sessions/:id/send' },
  cli: {
    command: ['send'],
    positional: ['id', 'text'],
    examples: ['warren send ses_01j… "please also check the tests"'],
  },
  handler: ({ kernel, principal }, i) => kernel.send(principal, i.id, i.text),
});

export const suspend = defineSyscall({
  name: 'suspend',
  group: 'sessions',
  summary: 'SIGSTOP a session and its whole subtree',
  input: z.object({ id: s.sessionId }),
  output: z.object({ signal: z.literal('SIGSTOP'), sessions: z.array(z.string()) }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'POST', path: '/v1/sessions/:id/suspend' },
  cli: { command: ['suspend'], positional: ['id'], examples: ['warren suspend ses_01j…'] },
  handler: async ({ kernel, principal }, i) => {
    const r = await kernel.stopOrContinue(principal, i.id, 'SIGSTOP');
    return { signal: 'SIGSTOP' as const, sessions: r.sessions };
  },
});

export const resume = defineSyscall({
  name: 'resume',
  group: 'sessions',
  summary: 'Resume a suspended session (SIGCONT its subtree)',
  description:
    'Reanimate a suspended session from where it stood: same working directory, endpoint, token and model. A session suspended by SIGSTOP is continued with its whole subtree.',
  input: z.object({ id: s.sessionId }),
  output: z.object({ session: s.session, continued: z.array(z.string()) }),
  callers: ['operator', 'session'],
  jobs: ['operator'],
  http: { method: 'POST', path: '/v1/sessions/:id/resume' },
  cli: { command: ['resume'], positional: ['id'], examples: ['warren resume ses_01j…'] },
  handler: async ({ kernel, principal }, i) => {
    const current = await kernel.session(principal, i.id);
    if (current.status === 'suspended' && current.suspendReason === 'SIGSTOP') {
      const r = await kernel.stopOrContinue(principal, i.id, 'SIGCONT');
      return { session: await kernel.session(principal, i.id), continued: r.sessions };
    }
    return { session: await kernel.resume(principal, i.id), continued: [] };
  },
});

export const sessionOpen = defineSyscall({
  name: 'session_open',
  group: 'sessions',
  summary: "Open a session's lifecycle (and pipe); reanimates it if it was suspended or stopped cleanly",
  description:
    'Subscribe to a session: you get an fd on its lifecycle (rw, detach) and, with pipe, on its pipe. Open is reanimate: a session that is suspended (its transport dropped, the server restarted) or that stopped cleanly with resume state comes back from where it stood, with the same working directory, endpoint and model. SIGSTOP needs SIGCONT (resume) instead.',
  input: z.object({
    id: s.sessionId,
    pipe: s.deliveryMode.optional().describe('Your end of its pipe (default detach)'),
  }),
  output: z.object({
    session: s.session,
    lifecycleFd: z.number(),
    pipeFd: z.number().nullable(),
    reanimated: z.boolean(),
  }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/v1/sessions/:id/open' },
  cli: {
    command: ['session', 'open'],
    positional: ['id'],
    examples: ['warren session open ses_01j…', 'warren session open ses_01j… --pipe async'],
  },
  handler: ({ kernel, principal }, i) => kernel.open(principal, i.id, i.pipe ?? null),
});

export const sessionDelete = defineSyscall({
  name: 'session_delete',
  group: 'sessions',
  summary: 'Delete a stopped session (bottom-up: its children first)',
  description:
    'Remove a stopped session from the tables, with its closed plumbing, fds and cursors. Refused while it is live or has children that are not deleted (like rmdir). Its history stays in the log until log retention removes it.',
  input: z.object({ id: s.sessionId }),
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  callers: ['operator', 'session'],
  http: { method: 'DELETE', path: '/v1/sessions/:id' },
  cli: { command: ['session', 'delete'], positional: ['id'], examples: ['warren session delete ses_01j…'] },
  handler: ({ kernel, principal }, i) => kernel.deleteSession(principal, i.id),
});

export const sessionSyscalls = [ps, sessionShow, kill, send, suspend, resume, sessionOpen, sessionDelete];
