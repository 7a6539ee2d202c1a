import { z } from 'zod';
import { BUDGET_MAX } from '../kernel/budget.ts';

/** Shared shapes for syscall inputs and outputs. */

/**
 * Another operation's input inside this one's (a schedule's task or spawn): validated as that
 * input, but listed to a model as an object that names it, not as a second copy of a schema
 * of thousands of characters (the named tool's own listing has the fields).
 */
export const inputOf = <T extends z.ZodType<unknown, Record<string, unknown>>>(
  schema: T,
  description: string,
) => z.record(z.string(), z.unknown()).pipe(schema).describe(description);

export const permission = z.enum(['r', 'w', 'rw']).describe('r read, w write, rw both');
export const deliveryMode = z
  .enum(['sync', 'async', 'detach'])
  .describe('sync: you read (bounded waits); async: pushed to you; detach: read when you like');
export const fdNumber = z.coerce.number().int().nonnegative().describe('An fd number you hold');
export const sessionId = z.string().min(1).describe('A session id');
export const streamRef = z.string().min(1).describe('A stream id or name');
const flag = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());
export const optionalFlag = flag.optional();
export const limit = z.coerce.number().int().positive().max(10_000).optional().describe('Max rows to return');
export const seq = z.coerce.number().int().nonnegative();
/** A place in the log: a seq, or an event's id (the ULID the CLI's ID column shows). */
export const logPosition = z.union([
  seq,
  z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/i, 'a seq, or an event id (26-character ULID)'),
]);

/** C0 controls, DEL and C1: in a name they would reach every operator's terminal (ESC sequences). */
const hasControl = (v: string): boolean => {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
};
const printable = (field: string) =>
  [(v: string) => !hasControl(v), { message: `${field} must not contain control characters` }] as const;

/** A stream name, as a caller gives it at creation. */
export const streamName = z
  .string()
  .min(1)
  .max(200)
  .refine(...printable('a stream name'))
  .describe('The stream name (unique in your zone)');
/** A session title. */
export const title = z
  .string()
  .max(200)
  .refine(...printable('a title'));

/** Every list is paged: no call returns (or builds) an unbounded answer. */
export const DEFAULT_PAGE = 200;
export const pageInput = {
  limit: z.coerce
    .number()
    .int()
    .positive()
    .max(1000)
    .optional()
    .describe(`Max items (default ${DEFAULT_PAGE})`),
  after: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Continue after this id: the `next` of the previous page'),
};
export const nextCursor = z
  .string()
  .nullable()
  .describe('Pass as `after` for the next page; null at the end');

/**
 * One page of a list in the kernel's order (creation order, ids ascending), after the item
 * `after` names (or, if it is gone, after the first id above it).
 */
export function page<T extends { id: string }>(
  items: readonly T[],
  p: { limit?: number | undefined; after?: string | undefined },
): { items: T[]; next: string | null } {
  const limit = p.limit ?? DEFAULT_PAGE;
  let start = 0;
  if (p.after !== undefined) {
    const at = items.findIndex((x) => x.id === p.after);
    start = at >= 0 ? at + 1 : items.findIndex((x) => x.id > (p.after as string));
    if (start < 0) start = items.length;
  }
  const slice = items.slice(start, start + limit);
  return { items: slice, next: start + limit < items.length ? (slice.at(-1)?.id ?? null) : null };
}

/** An ISO 8601 time (or epoch ms) in, epoch ms out. */
export const isoTime = z
  .union([z.number().int(), z.string().min(1, 'a time is required')])
  .transform((v, ctx) => {
    const ms = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: `not an ISO 8601 time: ${v}` });
      return z.NEVER;
    }
    return ms;
  });

/** A persona's name (its id): letters, digits, `_`, `-` and `.`, like a secret's. */
export const personaName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a persona name is 1-128 letters, digits, _, - or .')
  .describe('A persona name');

export const usage = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  costUsd: z.number().optional(),
  turns: z.number().optional(),
});

/** A budget for a subtree, as a caller asks for it (kernel/budget.ts checks it again). */
export const budget = z
  .strictObject({
    inputTokens: z.number().int().nonnegative().max(BUDGET_MAX.inputTokens).optional(),
    outputTokens: z.number().int().nonnegative().max(BUDGET_MAX.outputTokens).optional(),
    costUsd: z.number().nonnegative().max(BUDGET_MAX.costUsd).optional(),
    turns: z.number().int().nonnegative().max(BUDGET_MAX.turns).optional(),
    wallMs: z.number().int().nonnegative().max(BUDGET_MAX.wallMs).optional(),
  })
  .describe(
    'Limits for its whole subtree: inputTokens, outputTokens, costUsd, turns, wallMs (from spawn); capped by what is left above it',
  );

const subtreeTotals = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
  turns: z.number(),
});

const budgetLimits = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  costUsd: z.number().optional(),
  turns: z.number().optional(),
  wallMs: z.number().optional(),
});

export const budgetInfo = z.object({
  limits: budgetLimits,
  remaining: budgetLimits,
  deadline: z.number().nullable(),
  exceeded: z
    .object({
      limit: z.enum(['inputTokens', 'outputTokens', 'costUsd', 'turns', 'wallMs']),
      max: z.number(),
      used: z.number(),
      over: z.number(),
    })
    .nullable(),
});

export const session = z.object({
  id: z.string(),
  zone: z.string(),
  parentId: z.string().nullable(),
  depth: z.number(),
  status: z.enum(['pending', 'running', 'idle', 'suspended', 'stopped']),
  endReason: z
    .enum(['completed', 'killed', 'terminated', 'crashed', 'expired', 'budget_exceeded', 'reaped'])
    .nullable(),
  endDetail: z.string().nullable(),
  activity: z.string().nullable(),
  runtime: z.string(),
  runner: z.string(),
  title: z.string().nullable(),
  parentClose: z.enum(['reparent', 'terminate', 'sigterm']),
  lastMessage: z.string().nullable(),
  suspendReason: z.string().nullable(),
  turns: z.number(),
  usage,
  subtreeUsage: subtreeTotals,
  budget: budgetInfo.nullable(),
  tools: z.array(z.string()).nullable(),
  persona: z.string().nullable(),
  model: z.string().nullable(),
  maxTurns: z.number().nullable(),
  /** How its agent is confined (`session show`): bwrap, none, in-process (script) or remote (a runner). */
  containment: z
    .object({
      mode: z.enum(['bwrap', 'none', 'in-process', 'remote']),
      network: z.enum(['full', 'none']).optional(),
    })
    .nullable()
    .optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  endedAt: z.number().nullable(),
});

export const fd = z.object({
  fd: z.number(),
  id: z.string(),
  holder: z.string(),
  streamId: z.string(),
  streamName: z.string(),
  permission,
  deliveryMode,
  cursor: z.number(),
  owned: z.boolean(),
  spawned: z.boolean(),
  pending: z.number(),
});

export const stream = z.object({
  id: z.string(),
  zone: z.string(),
  name: z.string(),
  kind: z.enum(['named', 'pipe', 'lifecycle', 'stdin']),
  owner: z.string(),
  sessionId: z.string().nullable(),
  selfEcho: z.boolean(),
  createdAt: z.number(),
  closedAt: z.number().nullable(),
});

export const streamListing = stream.extend({ subscribers: z.array(fd), bufferDepth: z.number() });

export const message = z.object({
  seq: z.number(),
  id: z.string(),
  ts: z.number(),
  streamId: z.string(),
  from: z.string(),
  text: z.string(),
  kind: z.enum(['message', 'signal']),
  signal: z.string().optional(),
  data: z.unknown().optional(),
});

export const event = z.object({
  seq: z.number(),
  id: z.string(),
  zone: z.string(),
  ts: z.number(),
  type: z.string(),
  actor: z.string(),
  session_id: z.string().nullable(),
  stream_id: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});
