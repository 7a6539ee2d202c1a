import type { Completion } from '../../contract/plugin.ts';

/** The kernel's names an MCP client completes: session ids, stream names, persona names. */
export const coreCompletions: readonly Completion[] = [
  {
    kind: 'sessions',
    via: 'session_show',
    values: async ({ kernel, principal }, prefix, limit) =>
      (await kernel.listSessions(principal, { prefix, limit })).map((s) => s.id),
  },
  {
    kind: 'streams',
    via: 'streams_transcript',
    values: ({ kernel, principal }, prefix, limit) => kernel.streamNames(principal, { prefix, limit }),
  },
  {
    kind: 'personas',
    via: 'persona_list',
    values: ({ kernel, principal }, prefix, limit) => kernel.personaNames(principal, prefix, limit),
  },
];
