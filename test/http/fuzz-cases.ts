/**
 * The fuzz cases of test/http/fuzz.test.ts, generated from the syscall table: every REST route
 * and MCP tool with wrong types, missing fields, huge strings, deep nesting, NUL bytes, bad
 * ids, path traversal. The suite runs a seeded sample (`fuzz`, `sampleOf`); every case runs
 * in `npm run bench -- fuzz` (bench/fuzz.ts) or with FUZZ_CASES=all.
 */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { type ApiOptions, type HttpWarren, request } from '../helpers/http.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { idleScript } from '../helpers/warrens.ts';

const HANG_MS = 10_000;

const deep = (n: number): unknown => {
  let v: unknown = 'bottom';
  for (let i = 0; i < n; i++) v = [v];
  return v;
};

/** Values no field expects; each is tried in every field of every syscall. */
const MUTANTS: unknown[] = [
  null,
  true,
  -1,
  1.5,
  2 ** 53 + 1,
  1e308,
  'NaN',
  '',
  [],
  {},
  [1, 'two', null],
  { nested: { deeper: [{}] } },
  deep(40),
  'x'.repeat(300_000),
  'a\u0000b',
  '\u001b[2J\u001b]0;pwned\u0007',
  '../../../../etc/passwd',
  '/etc/shadow',
  'ses_../../x',
  'ses_00000000000000000000000000',
  '%00%2e%2e%2f',
  '😀'.repeat(500),
  { __proto__: { polluted: true } },
];

/** The mutants tried one field at a time (all of them are tried in every field at once). */
const PER_FIELD = [0, 2, 4, 8, 12, 14, 16, 18, 20].map((i) => MUTANTS[i]);

/** Path parameters that must not escape anything. */
const BAD_IDS = [
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  'x'.repeat(5000),
  '-1',
  '99999999999999999999',
  '%E2%80%AE',
];

export interface Case {
  what: string;
  run(): Promise<{ status: number; body: string }>;
}

const propsOf = (schema: z.ZodType): string[] => {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, unknown>;
  };
  return Object.keys(json.properties ?? {});
};

export function restCases(h: HttpWarren, auths: string[], fd: number): Case[] {
  const cases: Case[] = [];
  const send =
    (method: string, path: string, body: unknown, opts: ApiOptions = {}) =>
    async () => {
      const r = await request(h.url, method, path, body, { auth: opts.auth ?? h.key, ...opts });
      return { status: r.status, body: JSON.stringify(r.json) };
    };
  for (const s of h.warren.table.values()) {
    const props = propsOf(s.input);
    const inputs: Array<[string, unknown]> = [['missing fields', {}]];
    for (const [i, m] of MUTANTS.entries())
      inputs.push([`every field = mutant ${i}`, Object.fromEntries(props.map((p) => [p, m]))]);
    for (const [i, m] of PER_FIELD.entries())
      for (const p of props) inputs.push([`${p} = per-field mutant ${i}`, { [p]: m }]);
    // Nesting too deep to build as a value here (JSON.stringify itself overflows): sent as text.
    for (const p of props) {
      const raw = `{"${p}":${'['.repeat(5000)}${']'.repeat(5000)}}`;
      cases.push({
        what: `POST /v1/syscalls/${s.name} ${p} nested 5,000 deep`,
        run: send('POST', `/v1/syscalls/${s.name}`, undefined, { raw }),
      });
    }
    for (const [what, input] of inputs) {
      const auth = auths[cases.length % auths.length]!;
      cases.push({
        what: `POST /v1/syscalls/${s.name} ${what}`,
        run: send('POST', `/v1/syscalls/${s.name}`, input, { auth }),
      });
    }
    if (!s.http) continue;
    const { method, path } = s.http;
    for (const id of BAD_IDS) {
      const url = path.replace(/:(\w+)/g, id);
      const body = method === 'GET' ? undefined : {};
      cases.push({ what: `${method} ${path} with ${id.slice(0, 20)}`, run: send(method, url, body) });
    }
    for (const [i, m] of MUTANTS.entries()) {
      if (method === 'GET') {
        const qs = props.map(
          (p) => `${p}=${encodeURIComponent(typeof m === 'string' ? m.slice(0, 2000) : JSON.stringify(m))}`,
        );
        const url = path.replace(/:(\w+)/g, '1');
        cases.push({
          what: `GET ${path} query mutant ${i}`,
          run: send('GET', `${url}?${qs.join('&')}`, undefined),
        });
      } else {
        const url = path.replace(/:(\w+)/g, '1');
        cases.push({
          what: `${method} ${path} body mutant ${i}`,
          run: send(method, url, Object.fromEntries(props.map((p) => [p, m]))),
        });
      }
    }
  }
  // Bodies no parser should choke on.
  const raws = [
    `{"a":${'['.repeat(6000)}${']'.repeat(6000)}}`,
    `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`,
    '{"__proto__":{"polluted":true},"name":"p"}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '\u0000',
    '{"name":"\\u0000"}',
    `"${'a'.repeat(1000)}`,
    '[',
    'null',
    '1e999999',
  ];
  // Deep nesting in a field the schema accepts as anything, on an otherwise valid call.
  const deepData = `{"fd":${fd},"message":"m","data":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  cases.push({
    what: 'ipc_write with data nested 5,000 deep',
    run: send('POST', '/v1/syscalls/ipc_write', undefined, { raw: deepData }),
  });
  cases.push({
    what: 'fds write with data nested 5,000 deep',
    run: send('POST', `/v1/fds/${fd}/write`, undefined, { raw: deepData }),
  });
  for (const [i, raw] of raws.entries())
    for (const path of ['/v1/streams', '/v1/syscalls/ipc_spawn', '/mcp'])
      cases.push({ what: `raw body ${i} to ${path}`, run: send('POST', path, undefined, { raw }) });
  return cases;
}

export async function runAll(cases: Case[], concurrency: number): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      let timer: NodeJS.Timeout | undefined;
      try {
        const r = await Promise.race([
          c.run(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer in ${HANG_MS} ms`)), HANG_MS);
          }),
        ]);
        if (r.status >= 500) failures.push(`${c.what}: ${r.status} ${r.body.slice(0, 300)}`);
      } catch (error) {
        failures.push(`${c.what}: ${(error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failures;
}

export async function assertGapFree(h: HttpWarren): Promise<void> {
  await h.warren.store.writer.drained();
  const head = await h.head();
  const rows = await h.warren.store.reader.selectFrom('events').select('seq').orderBy('seq').execute();
  assert.equal(rows.length, head, 'every seq up to the head has an event');
  rows.forEach((r, i) => {
    assert.equal(Number(r.seq), i + 1);
  });
}

/** MCP cases: every tool with every mutant in all its fields, operator and agent taking turns. */
export function mcpCases(h: HttpWarren, clients: Client[]): Case[] {
  const cases: Case[] = [];
  for (const s of h.warren.table.values()) {
    const props = propsOf(s.input);
    for (const [i, m] of MUTANTS.entries()) {
      // Operator and agent take turns: both kinds of caller see every tool once in two.
      const c = clients[i % clients.length]!;
      const args = Object.fromEntries(props.map((p) => [p, m]));
      cases.push({
        what: `MCP ${s.name} mutant ${i}`,
        run: async () => {
          try {
            const r = await c.callTool({ name: s.name, arguments: args }, undefined, { timeout: HANG_MS });
            const err = (r.structuredContent as { error?: { code?: string } } | undefined)?.error;
            return { status: err?.code === 'internal' ? 500 : 200, body: JSON.stringify(r).slice(0, 300) };
          } catch (error) {
            // Protocol errors (unknown tool, a tool this caller may not list) are answers, not crashes.
            const msg = (error as Error).message;
            return { status: /timed out|ECONN|fetch failed/i.test(msg) ? 599 : 400, body: msg };
          }
        },
      });
    }
  }
  return cases;
}

/** A deterministic generator (mulberry32): the same seed picks the same sample. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` of `cases` picked by `seed` (all of them when n ≥ their number), in their original order. */
export function sampleOf<T>(cases: T[], n: number, seed: number): T[] {
  if (n >= cases.length) return cases;
  const r = rng(seed);
  const index = cases.map((_, i) => i);
  // A partial Fisher–Yates shuffle: the first n places are the sample.
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(r() * (index.length - i));
    [index[i], index[j]] = [index[j]!, index[i]!];
  }
  return index
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => cases[i]!);
}

export interface FuzzResult {
  /** Cases generated (REST and MCP). */
  total: number;
  /** Cases run (the sample). */
  ran: number;
  failures: string[];
}

/**
 * Generate every case against `h` (an operator and an agent as callers), run `n` of them
 * picked by `seed` (Infinity: all), six at a time. The server's health and the log's
 * continuity are the caller's to check after.
 */
export async function fuzz(h: HttpWarren, n: number, seed: number): Promise<FuzzResult> {
  const agent = (await h.api('POST', '/v1/sessions', { script: idleScript })).json.session.id;
  const auths = [h.key, h.tokenOf(agent)];
  const room = (await h.api('POST', '/v1/streams', { name: 'fuzz-room' })).json.fd as number;
  const clients: Client[] = [];
  try {
    for (const bearer of auths) clients.push(await mcpClient(h.url, bearer));
    const all = [...restCases(h, auths, room), ...mcpCases(h, clients)];
    const picked = sampleOf(all, n, seed);
    return { total: all.length, ran: picked.length, failures: await runAll(picked, 6) };
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
  }
}
