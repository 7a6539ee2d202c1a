/**
 * The whole syscall table as models see it (issue 24): every property of every listed tool
 * says what it is, no tool's listing is out of proportion, each job's default set is within
 * its budget, and docs/mcp.md's generated part is what the table makes today.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { tokensOfTool, withMcpTools } from '../../src/surfaces/docs/mcp-tools.ts';
import { MCP_DOC_PATH } from '../../src/surfaces/docs/write.ts';
import { toTool } from '../../src/surfaces/mcp/catalog.ts';
import { Gate } from '../../src/syscalls/gate.ts';
import { allSyscalls, syscallTable } from '../../src/syscalls/table.ts';

/** Most tokens one tool's listing may take (the largest today: task_create, ipc_spawn, ~1.3k). */
const MAX_TOOL_TOKENS = 1_500;
/** The budgets, in tokens, for each job's default list. */
const BUDGETS = { worker: 3_000, orchestrator: 6_000, operator: 10_000 } as const;

type Schema = { description?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };

/**
 * Properties with no description a model can act on: neither its own (or one of its anyOf
 * branches'), nor its parent's naming it (`budget: "… inputTokens, outputTokens …"`).
 */
export function undescribed(schema: Schema, path = '', parent = ''): string[] {
  const out: string[] = [];
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const own = p.description ?? p.anyOf?.find((a) => a.description)?.description;
    if (!own && !parent.includes(name)) out.push(path + name);
    for (const sub of [p, p.items, ...(p.anyOf ?? [])])
      if (sub) out.push(...undescribed(sub, `${path}${name}.`, own ?? ''));
  }
  return out;
}

describe('the tool table', () => {
  const listed = allSyscalls.filter((s) => s.listed !== false);

  it('every property of every tool has a description', () => {
    const missing = listed.flatMap((s) =>
      undescribed(toTool(s).inputSchema as Schema).map((p) => `${s.name}.${p}`),
    );
    assert.deepEqual(missing, []);
  });

  it(`no tool's listing takes more than ${MAX_TOOL_TOKENS} tokens`, () => {
    const big = listed
      .map((s) => ({ name: s.name, tokens: tokensOfTool(toTool(s)) }))
      .filter((t) => t.tokens > MAX_TOOL_TOKENS);
    assert.deepEqual(big, []);
  });

  it('each job’s default list is within its budget', () => {
    const table = syscallTable();
    const gate = new Gate(table);
    for (const [job, budget] of Object.entries(BUDGETS)) {
      const tokens = gate
        .jobDefaults(job as keyof typeof BUDGETS)
        .reduce((n, name) => n + tokensOfTool(toTool(table.get(name)!)), 0);
      assert.ok(tokens <= budget, `${job}: ${tokens} tokens, budget ${budget}`);
    }
  });

  it('docs/mcp.md’s tool tables are generated from the table (run `npm run docs:mcp`)', () => {
    const doc = readFileSync(MCP_DOC_PATH, 'utf8');
    assert.equal(doc, withMcpTools(doc, syscallTable()));
  });
});
