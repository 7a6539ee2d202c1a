/**
 * Tool lists (issue 24): what each kind of caller is shown by `tools/list`, in tools and in
 * tokens (the JSON of every tool's `name`, `description` and `inputSchema`, all pages,
 * characters / 4: what a model pays on every request). Measured through the real MCP
 * surfaces of a running warren (Streamable HTTP; `warren mcp-serve coordinator` over stdio),
 * beside the baseline recorded on the code before issue 24 (bench/baselines/tools-a9821d8.json,
 * made by `npx tsx bench/tools.ts --record <file>` on a9821d8).
 *
 * `npx tsx bench/run.ts tools`, or `npx tsx bench/tools.ts` for the table alone.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ensureOperatorKey } from '../src/kernel/operator-keys.ts';
import { buildHttpServer } from '../src/surfaces/http/server.ts';
import { isolatingFetch } from '../src/surfaces/mcp/client-fetch.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE = join(ROOT, 'bench/baselines/tools-a9821d8.json');

export interface ToolList {
  tools: number;
  chars: number;
  tokens: number;
  names: string[];
  /** Why there is no list (e.g. the spawn that makes this caller was refused). */
  refused?: string;
}

/** The callers measured, in table order, with the goal in tokens where the issue sets one. */
export const CALLERS: ReadonlyArray<{ key: string; label: string; goal?: number }> = [
  { key: 'operator', label: 'operator (default list)', goal: 10_000 },
  { key: 'orchestrator', label: 'orchestrator (depth 1, no task)', goal: 6_000 },
  { key: 'taskWorker', label: 'task worker (depth 1, operator task, job worker)', goal: 3_000 },
  { key: 'child', label: 'ipc_spawn child (depth 2)', goal: 6_000 },
  { key: 'leadWorker', label: "task worker (depth 2, a lead's task)", goal: 3_000 },
  { key: 'grandchild', label: 'ipc_spawn grandchild (depth 3)', goal: 6_000 },
  { key: 'coordinatorAgent', label: 'coordinator agent (agent_spawn)' },
  { key: 'externalCoordinator', label: 'warren mcp-serve coordinator' },
];

const idle = { steps: [{ listen: {} }] };

type Listed = { name: string; description?: string; inputSchema: unknown };

/** Every page of tools/list, as the issue counts it. */
async function listAll(client: Client): Promise<ToolList> {
  const tools: Listed[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...(page.tools as Listed[]));
    cursor = page.nextCursor;
  } while (cursor);
  const chars = JSON.stringify(
    tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  ).length;
  return { tools: tools.length, chars, tokens: Math.round(chars / 4), names: tools.map((t) => t.name) };
}

const refused = (why: string): ToolList => ({ tools: 0, chars: 0, tokens: 0, names: [], refused: why });

async function httpClient(url: string, bearer: string): Promise<Client> {
  const client = new Client({ name: 'bench-tools', version: '0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      fetch: isolatingFetch(),
    }),
  );
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: tool results are read by the field this bench needs
type Any = any;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Any> {
  const r = (await client.callTool({ name, arguments: args })) as Any;
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The session a task was dispatched to. */
const sessionOfTask = (client: Client, id: string) =>
  until(
    `task ${id}'s session`,
    async () => (await call(client, 'task_show', { id })).task.sessionId ?? undefined,
  );

/** Every caller's list on a fresh warren (SQLite in a temp dir), then the warren closed. */
export async function measureTools(): Promise<Record<string, ToolList>> {
  using tmp = tempDir('warren-bench-tools-');
  const warren = await Warren.open({ db: join(tmp.dir, 'warren.db'), dataDir: tmp.dir });
  const app = await buildHttpServer(warren);
  const clients: Client[] = [];
  try {
    const { key } = await ensureOperatorKey(warren.store, warren.kernel.ids, tmp.dir);
    if (!key) throw new Error('no operator key');
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    warren.kernel.config.publicUrl = url;
    const as = async (bearer: string) => {
      const c = await httpClient(url, bearer);
      clients.push(c);
      return c;
    };
    const tokenOf = (id: string) => warren.tokens.mint(id, 0);
    const out: Record<string, ToolList> = {};

    const op = await as(key);
    out.operator = await listAll(op);

    const orch = (await call(op, 'ipc_spawn', { script: idle, title: 'orchestrator' })).session.id as string;
    const orchClient = await as(tokenOf(orch));
    out.orchestrator = await listAll(orchClient);

    const task = await call(op, 'task_create', {
      title: 'work',
      prompt: 'work',
      spawn: { script: idle, job: 'worker' },
    });
    out.taskWorker = await listAll(await as(tokenOf(await sessionOfTask(op, task.task.id))));

    const child = (await call(orchClient, 'ipc_spawn', { script: idle })).session.id as string;
    const childClient = await as(tokenOf(child));
    out.child = await listAll(childClient);

    try {
      const led = await call(orchClient, 'task_create', {
        title: 'part',
        prompt: 'part',
        spawn: { script: idle },
      });
      out.leadWorker = await listAll(await as(tokenOf(await sessionOfTask(op, led.task.id))));
    } catch (error) {
      out.leadWorker = refused((error as Error).message.slice(0, 120));
    }

    try {
      const grand = (await call(childClient, 'ipc_spawn', { script: idle })).session.id as string;
      out.grandchild = await listAll(await as(tokenOf(grand)));
    } catch (error) {
      out.grandchild = refused((error as Error).message.slice(0, 120));
    }

    const agent = await call(op, 'agent_spawn', { zoneId: 'default', application_id: 'bench' });
    out.coordinatorAgent = await listAll(await as(tokenOf(agent.agent.id)));

    out.externalCoordinator = await externalCoordinator();
    return out;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await app.close();
    await warren.close();
  }
}

/** `warren mcp-serve coordinator` over stdio: its list is fixed, so no server is needed behind it. */
async function externalCoordinator(): Promise<ToolList> {
  const client = new Client({ name: 'bench-tools', version: '0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin/warren.js'), 'mcp-serve', 'coordinator', '--key', 'unused'],
    env: { PATH: process.env.PATH ?? '', WARREN_URL: 'http://127.0.0.1:9', WARREN_FROM_SOURCE: '1' },
    cwd: ROOT,
    stderr: 'ignore',
  });
  await client.connect(transport);
  try {
    return await listAll(client);
  } finally {
    await client.close();
  }
}

interface Baseline {
  commit: string;
  measuredAt: string;
  callers: Record<string, ToolList>;
}

function readBaseline(): Baseline | null {
  try {
    return JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
  } catch {
    return null;
  }
}

const cell = (l: ToolList | undefined) =>
  !l ? '-' : l.refused ? `refused (${l.refused.slice(0, 60)})` : `${l.tools} tools, ${l.tokens} tok`;

export const toolBenches = {
  async toolLists(): Promise<BenchRow[]> {
    const now = await measureTools();
    const base = readBaseline();
    return CALLERS.map(({ key, label, goal }) => {
      const l = now[key]!;
      const was = base?.callers[key];
      const note = `${l.refused ? `refused: ${l.refused}` : `${l.tools} tools`}; baseline ${cell(was)}${base ? ` (at ${base.commit}, bench/baselines/)` : ' (no baseline file)'}`;
      return {
        name: `tools/list ${label}`,
        value: l.refused ? Number.NaN : l.tokens,
        unit: 'tok',
        ...(was && !was.refused ? { baseline: was.tokens } : {}),
        ...(was && !was.refused && !l.refused ? { ratio: l.tokens / Math.max(1, was.tokens) } : {}),
        ...(goal !== undefined ? { max: goal } : {}),
        note,
      };
    });
  },
};

// `npx tsx bench/tools.ts [--record <file> --commit <sha>]`: the table, or a baseline file.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--record');
  const lists = await measureTools();
  if (at >= 0) {
    const commit = args[args.indexOf('--commit') + 1] ?? 'unknown';
    const record: Baseline = { commit, measuredAt: new Date().toISOString(), callers: lists };
    writeFileSync(args[at + 1]!, `${JSON.stringify(record, null, 2)}\n`);
  }
  for (const { key, label } of CALLERS) console.log(`${label.padEnd(40)} ${cell(lists[key])}`);
  // Stray handles (the coordinator's child) must not hold the process.
  spawn('true').unref();
}
