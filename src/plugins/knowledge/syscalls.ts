import { z } from 'zod';
import type { PluginInstance } from '../../contract/plugin.ts';
import * as s from '../../contract/schemas.ts';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import { ReadTimeoutError } from '../../store/worker-reader.ts';
import type { KeyedQueue } from '../../util/keyed-queue.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { principalId } from '../../vocab/principal.ts';
import type { TaskDirectory } from '../orchestration/directory.ts';
import { taskRef } from '../orchestration/tasks.ts';
import type { KnowledgeConfig } from './config.ts';
import { hitInfo, postFinding, showFinding } from './findings.ts';
import { termsOf } from './query.ts';
import type { Tables } from './schema.ts';
import type { FindingSearch } from './search.ts';
import { readWorkpad, writeWorkpad } from './workpads.ts';

/** Findings and workpads: agents (MCP tools) and operators (CLI, REST) call the same ones. */

export interface KnowledgeInstance extends PluginInstance {
  config: KnowledgeConfig;
  search: FindingSearch;
  tables: Tables;
  /** Orchestration's answers about tasks (knowledge never reads its tables). */
  tasks: TaskDirectory;
  /** Searches per caller, one at a time: a caller's burst waits behind itself, not others. */
  lanes: KeyedQueue;
}

const knowledge = (ctx: SyscallContext) => ctx.self as KnowledgeInstance;

const taskId = z.string().min(1).max(200).describe('A task id');
/** Tags: short, lowercase words (`db`, `perf.cache`, `area:auth`). */
const tag = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._:-]{0,47}$/,
    'a tag is 1-48 of a-z 0-9 . _ : - (starting with a letter or digit)',
  );
const tags = z.array(tag).max(16);
/** A hard cap before the configured byte cap (`maxFindingBytes`, `maxWorkpadBytes`) is checked. */
const text = (what: string) =>
  z
    .string()
    .max(4 * 1024 * 1024)
    .describe(what);

const finding = z.object({
  id: z.string(),
  zone: z.string(),
  title: z.string(),
  body: z.string(),
  tags: z.array(z.string()),
  task: z.string().nullable(),
  session: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.number(),
});
const hit = finding.extend({
  score: z.number().nullable().describe('Relevance: higher is better (null: no search words, newest first)'),
});
const workpad = z.object({
  task: z.string(),
  body: z.string(),
  version: z.number().describe('0 before the first write; pass it back to workpad_write'),
  updatedBy: z.string().nullable(),
  updatedAt: z.number().nullable(),
});

export const knowledgePost = defineSyscall({
  name: 'knowledge_post',
  group: 'knowledge',
  summary: 'Post a finding (title, body, tags) for later sessions to find and start from',
  description:
    'A finding is kept with the task and session it came from: your own task, unless you name one of your subtree. The sessions of tasks that depend on that task (or lie below it) get it in their start context; knowledge_search finds it.',
  input: z.object({
    title: s.title.min(1).describe('A short name for the finding'),
    body: text('What was found (at most maxFindingBytes, 16 KiB by default)'),
    tags: tags.optional().describe('Tags to filter by (at most 16)'),
    task: taskId.optional().describe('The task it belongs to (default: your own task)'),
  }),
  output: z.object({ finding }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/knowledge' },
  cli: {
    command: ['knowledge', 'post'],
    positional: ['title'],
    examples: [
      'warren knowledge post "cache is cold after deploys" --body "first requests take 2 s" --tags \'["perf"]\'',
    ],
  },
  async handler(ctx, i) {
    const k = knowledge(ctx);
    return {
      finding: await postFinding(ctx.kernel, k.tables, k.tasks, ctx.principal, i, k.config.maxFindingBytes),
    };
  },
});

export const knowledgeSearch = defineSyscall({
  name: 'knowledge_search',
  group: 'knowledge',
  summary: "Search your zone's findings by words, best matches first",
  description:
    'Words are matched stemmed (english), punctuation and operators are ignored; match all (default) or any of them. Without words: the newest findings (filtered by tags and task).',
  input: z.object({
    query: z.string().max(2000).optional().describe('Words to look for'),
    match: z.enum(['all', 'any']).optional().describe('all (default): every word; any: at least one'),
    tags: tags.optional().describe('Only findings with all of these tags'),
    task: taskId.optional().describe('Only findings of this task'),
    limit: z.coerce.number().int().min(1).max(50).optional().describe('At most this many (default 10)'),
  }),
  output: z.object({ findings: z.array(hit), terms: z.array(z.string()) }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/knowledge' },
  cli: {
    command: ['knowledge', 'search'],
    positional: ['query'],
    examples: ['warren knowledge search "cold cache"', 'warren knowledge search --tags \'["perf"]\''],
  },
  async handler(ctx, i) {
    const terms = termsOf(i.query ?? '');
    const k = knowledge(ctx);
    // Off the event loop (the heavy reader), one search at a time per caller.
    const hits = await k.lanes
      .run(principalId(ctx.principal), () =>
        k.search.search(k.tables.heavyReader, {
          zone: ctx.principal.zone,
          terms,
          match: i.match ?? 'all',
          limit: i.limit ?? 10,
          ...(i.tags ? { tags: i.tags } : {}),
          ...(i.task ? { task: taskRef(ctx.principal.zone, i.task) } : {}),
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ReadTimeoutError)) throw error;
        throw new WarrenError(
          'limit_exceeded',
          `the search ran past ${error.ms} ms and was stopped: search for fewer or rarer words`,
          { limit: 'searchMs', max: error.ms },
        );
      });
    return { findings: hits.map(hitInfo), terms };
  },
});

export const knowledgeShow = defineSyscall({
  name: 'knowledge_show',
  group: 'knowledge',
  summary: 'One finding, whole',
  input: z.object({ id: z.string().min(1).max(200).describe('A finding id (fnd_…)') }),
  output: z.object({ finding }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/knowledge/:id' },
  cli: { command: ['knowledge', 'show'], positional: ['id'], examples: ['warren knowledge show fnd_01j…'] },
  async handler(ctx, i) {
    return { finding: await showFinding(knowledge(ctx).tables, ctx.principal.zone, i.id) };
  },
});

export const workpadRead = defineSyscall({
  name: 'workpad_read',
  group: 'knowledge',
  summary: "A task's workpad: its scratch document and version",
  description:
    'Every task has one workpad its sessions share across attempts: read it, change it, write it back with the version you read. A session reads the workpads of its own task subtree.',
  input: z.object({ task: taskId }),
  output: z.object({ workpad }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'GET', path: '/v1/tasks/:task/workpad' },
  cli: { command: ['workpad', 'show'], positional: ['task'], examples: ['warren workpad show task_01j…'] },
  async handler(ctx, i) {
    const k = knowledge(ctx);
    return { workpad: await readWorkpad(k.tables, k.tasks, ctx.principal, i.task) };
  },
});

export const workpadWrite = defineSyscall({
  name: 'workpad_write',
  group: 'knowledge',
  summary: "Replace a task's workpad if it is still at the version you read",
  description:
    'Optimistic: version is the one workpad_read gave (0 for a workpad never written). If someone wrote in between, the call fails with conflict (details.current is the version now): read again and redo your change.',
  input: z.object({
    task: taskId,
    body: text('The whole new text (at most maxWorkpadBytes, 64 KiB by default)'),
    version: z.number().int().min(0).describe('The version you read'),
  }),
  output: z.object({ workpad }),
  callers: ['session', 'operator'],
  jobs: ['worker', 'orchestrator', 'operator'],
  http: { method: 'POST', path: '/v1/tasks/:task/workpad' },
  cli: {
    command: ['workpad', 'write'],
    positional: ['task'],
    examples: ['warren workpad write task_01j… --version 3 --body "## plan …"'],
  },
  async handler(ctx, i) {
    const k = knowledge(ctx);
    return {
      workpad: await writeWorkpad(
        k.tables,
        k.tasks,
        ctx.principal,
        i.task,
        i.body,
        i.version,
        k.config.maxWorkpadBytes,
      ),
    };
  },
});

export const knowledgeSyscalls = [knowledgePost, knowledgeSearch, knowledgeShow, workpadRead, workpadWrite];
