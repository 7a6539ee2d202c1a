import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { toolInputSchema } from '../../contract/tool-schema.ts';
import type { Policy } from '../../plugins/turns/config.ts';
import { allowedWorkdir, requireMutation } from '../../plugins/turns/policy.ts';
import { type AdapterEnv, COORDINATOR_PRESET, SERVER_NAME } from '../../plugins/turns/preset.ts';
import { allSyscalls } from '../../syscalls/table.ts';
import type { OutputStream } from './types.ts';

/** The stdio MCP server behind `warren mcp-serve coordinator`: the preset's tools, forwarded. */

/** Fields the adapter fills itself: the namespace is the adapter's, not the caller's. */
const ADAPTER_FIELDS = ['profile', 'repo'];

function tools(): Tool[] {
  return COORDINATOR_PRESET.map((t) => {
    const s = allSyscalls.find((x) => x.name === t.syscall);
    if (!s) throw new Error(`preset names ${t.syscall}, which this build does not have`);
    const schema = toolInputSchema(s) as { properties?: Record<string, unknown> } & Record<string, unknown>;
    for (const f of ADAPTER_FIELDS) delete schema.properties?.[f];
    return {
      name: t.name,
      description: `${s.description ?? s.summary} (warren: ${s.name}${t.mutation ? `; mutates: ${t.mutation}, needs allow_mutation: true` : ''})`,
      inputSchema: schema as Tool['inputSchema'],
    };
  });
}

export function checkReport(env: AdapterEnv) {
  return {
    ok: true,
    server: SERVER_NAME,
    tools: tools().map((t) => t.name),
    mutations: env.mutations,
    workdir_roots: env.workdirRoots,
    namespace: { profile: env.profile ?? '', repo: env.repo ?? '' },
  };
}

const policyOf = (env: AdapterEnv): Policy => ({
  mutations: env.mutations,
  workdirRoots: env.workdirRoots,
  profile: env.profile ?? '',
  repo: env.repo ?? '',
  artifactByteCap: env.artifactByteCap ?? Number.MAX_SAFE_INTEGER,
  responseByteCap: Number.MAX_SAFE_INTEGER,
});

/** The adapter's own checks, then the arguments the syscall gets. Throws what the caller should see. */
export function prepareCall(env: AdapterEnv, toolName: string, args: Record<string, unknown>) {
  const t = COORDINATOR_PRESET.find((x) => x.name === toolName);
  if (!t) throw Object.assign(new Error(`unknown tool ${toolName}`), { code: 'not_found' });
  const policy = policyOf(env);
  if (t.mutation) requireMutation(policy, t.mutation, args.allow_mutation as boolean | undefined);
  const input: Record<string, unknown> = { ...args };
  for (const f of ADAPTER_FIELDS) delete input[f];
  if (env.profile !== undefined) input.profile = env.profile;
  if (env.repo !== undefined) input.repo = env.repo;
  const starts =
    t.syscall === 'bridge_start_session' ||
    (t.syscall.startsWith('bridge_delegate_') && args.session_id === undefined);
  if (starts) {
    input.cwd = allowedWorkdir(policy, String(args.cwd ?? ''));
    if (input.worktree === undefined && env.worktree !== undefined && input.visible !== true)
      input.worktree = env.worktree;
    const config = (input.config ?? {}) as Record<string, unknown>;
    if (input.kind === 'command' && config.command === undefined && env.sessionCommand) {
      input.config = { ...config, command: env.sessionCommand };
    }
  }
  if (t.syscall === 'bridge_read_artifact' && env.artifactByteCap !== undefined) {
    const asked = typeof args.max_bytes === 'number' ? args.max_bytes : env.artifactByteCap;
    input.max_bytes = Math.min(asked, env.artifactByteCap);
  }
  return { syscall: t.syscall, input };
}

export async function serveCoordinator(
  base: URL,
  headers: Record<string, string>,
  env: AdapterEnv,
  stderr: OutputStream,
): Promise<number> {
  const list = tools();
  const server = new Server({ name: SERVER_NAME, version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: list }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const fail = (code: string, message: string) => ({
      isError: true,
      content: [{ type: 'text' as const, text: JSON.stringify({ error: { code, message } }) }],
    });
    let call: ReturnType<typeof prepareCall>;
    try {
      call = prepareCall(env, req.params.name, (req.params.arguments ?? {}) as Record<string, unknown>);
    } catch (error) {
      const e = error as Error & { code?: string };
      return fail(e.code ?? 'invalid_input', e.message);
    }
    try {
      const res = await fetch(new URL(`/v1/syscalls/${call.syscall}`, base), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(call.input),
        signal: extra.signal,
      });
      const body = (await res.json()) as Record<string, unknown> & {
        error?: { code: string; message: string };
      };
      if (!res.ok) return fail(body.error?.code ?? 'internal', body.error?.message ?? `HTTP ${res.status}`);
      return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: body };
    } catch (error) {
      return fail('unavailable', `warren at ${base.origin}: ${(error as Error).message}`);
    }
  });
  const transport = new StdioServerTransport(process.stdin, process.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch((error) => stderr.write(`warren mcp-serve: ${(error as Error).message}\n`));
  return 0;
}
