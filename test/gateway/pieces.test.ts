/**
 * The gateway's pieces alone: reading usage from an answer's bytes however they are cut,
 * the budget check before a call, prices, the held upstreams, and Claude Code's environment
 * behind the gateway.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScopeRow } from '../../src/kernel/budget.ts';
import type { Core } from '../../src/kernel/core.ts';
import { estimateInputTokens, refusal, refusalText } from '../../src/kernel/gateway/admit.ts';
import { Breaker, BreakerOpen } from '../../src/kernel/gateway/breaker.ts';
import { ModelGateway } from '../../src/kernel/gateway/gateway.ts';
import {
  defaultLimiterConfig,
  KeyLimiter,
  Limiters,
  retryDelayMs,
} from '../../src/kernel/gateway/limiter.ts';
import { Pace, resetTime } from '../../src/kernel/gateway/pacing.ts';
import { costOf, DEFAULT_PRICES, priceOf } from '../../src/kernel/gateway/prices.ts';
import { runnerUpstream } from '../../src/kernel/gateway/runner-upstream.ts';
import { Upstreams } from '../../src/kernel/gateway/upstreams.ts';
import { throughGateway } from '../../src/runtimes/claude-code/gateway.ts';
import { throughGateway as codexThroughGateway, OPENAI_API } from '../../src/runtimes/codex/gateway.ts';
import type { AgentGateway } from '../../src/runtimes/types.ts';
import type { LogEvent } from '../../src/store/events.ts';
import { gatewayLine } from '../../src/surfaces/cli/views/status.ts';
import { upstreamHeaders } from '../../src/surfaces/http/gateway/upstream.ts';
import { ANTHROPIC_USAGE, AnswerUsage, OPENAI_USAGE } from '../../src/surfaces/http/gateway/usage.ts';
import { OVER_BUDGET } from '../../src/vocab/gateway.ts';

const ev = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

const STREAM = [
  ev('message_start', {
    message: {
      id: 'msg_1',
      model: 'claude-haiku-4-5',
      usage: {
        input_tokens: 100,
        cache_read_input_tokens: 40,
        cache_creation_input_tokens: 7,
        output_tokens: 1,
      },
    },
  }),
  ev('ping', {}),
  ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'message_delta é ✓' } }),
  ev('content_block_stop', { index: 0 }),
  ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 55 } }),
  ev('message_stop', {}),
].join('');

const WANT = { inputTokens: 100, outputTokens: 55, cacheReadTokens: 40, cacheWriteTokens: 7 };

function read(stream: boolean, text: string, cuts: number[]) {
  const u = new AnswerUsage(ANTHROPIC_USAGE, stream);
  const bytes = Buffer.from(text);
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    u.push(bytes.subarray(at, c));
    at = c;
  }
  return { usage: u.end(), model: u.model };
}

describe('usage from an answer', () => {
  it('reads a stream cut at every byte, with multi-byte characters split', () => {
    const bytes = Buffer.byteLength(STREAM);
    for (let cut = 1; cut < bytes; cut += 1) {
      const got = read(true, STREAM, [cut]);
      assert.deepEqual(got.usage, WANT, `cut at ${cut}`);
    }
    assert.deepEqual(
      read(
        true,
        STREAM,
        Array.from({ length: bytes - 1 }, (_, i) => i + 1),
      ).usage,
      WANT,
    );
    assert.equal(read(true, STREAM, []).model, 'claude-haiku-4-5');
  });

  it('reads CRLF-framed events, and later counts replace earlier ones', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    assert.deepEqual(read(true, crlf, [17, 300]).usage, WANT);
    const recount = `${STREAM}${ev('message_delta', { usage: { output_tokens: 60, input_tokens: 101 } })}`;
    assert.deepEqual(read(true, recount, []).usage, { ...WANT, outputTokens: 60, inputTokens: 101 });
  });

  it('reads a JSON answer; an answer without usage (an error) is null', () => {
    const json = JSON.stringify({
      model: 'm',
      content: [],
      usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 1 },
    });
    assert.deepEqual(read(false, json, [5]).usage, {
      inputTokens: 3,
      outputTokens: 2,
      cacheReadTokens: 1,
      cacheWriteTokens: 0,
    });
    assert.equal(read(false, '{"type":"error","error":{"type":"overloaded_error"}}', []).usage, null);
    assert.equal(read(false, '<html>bad gateway</html>', []).usage, null);
    assert.equal(read(true, ev('error', { error: { type: 'overloaded_error' } }), []).usage, null);
  });

  it('ignores counts that are not non-negative numbers', () => {
    const bad = ev('message_start', { message: { usage: { input_tokens: -5, output_tokens: 'x' } } });
    assert.equal(read(true, bad, []).usage, null);
  });
});

const row = (over: Partial<ScopeRow>): ScopeRow => ({
  id: 'ses_b',
  status: 'running',
  budget: JSON.stringify({ inputTokens: 1000 }),
  budget_breach: null,
  created_at: 0,
  subtree_input_tokens: 0,
  subtree_output_tokens: 0,
  subtree_cost_usd: 0,
  subtree_turns: 0,
  ...over,
});

describe('budgets before the call', () => {
  it('lets a call through that fits what is left', () => {
    assert.equal(refusal([row({ subtree_input_tokens: 500 })], { inputTokens: 500, costUsd: null }, 1), null);
  });

  it('refuses a call whose estimated input is more than is left', () => {
    const r = refusal([row({ subtree_input_tokens: 500 })], { inputTokens: 501, costUsd: null }, 1);
    assert.deepEqual(r, {
      budgetOf: 'ses_b',
      already: false,
      spent: { limit: 'inputTokens', max: 1000, used: 500, over: 1, estimated: 501 },
    });
    assert.ok(refusalText(r!).startsWith(OVER_BUDGET));
    assert.match(refusalText(r!), /would be passed by a model request of about 501: 500 used of 1000/);
  });

  it('refuses when a limit is reached, when the breach is recorded, and past wall time', () => {
    const spent = refusal([row({ subtree_input_tokens: 1000 })], { inputTokens: 0, costUsd: null }, 1);
    assert.equal(spent?.already, true);
    assert.equal(spent?.spent.limit, 'inputTokens');
    const outputs = row({ budget: JSON.stringify({ outputTokens: 10 }), subtree_output_tokens: 10 });
    assert.equal(refusal([outputs], { inputTokens: 1, costUsd: null }, 1)?.spent.limit, 'outputTokens');
    const recorded = row({ budget_breach: JSON.stringify({ limit: 'turns', max: 3, used: 3, over: 0 }) });
    assert.equal(refusal([recorded], { inputTokens: 1, costUsd: null }, 1)?.spent.limit, 'turns');
    const wall = row({ budget: JSON.stringify({ wallMs: 100 }), created_at: 0 });
    assert.equal(refusal([wall], { inputTokens: 1, costUsd: null }, 99), null);
    assert.equal(refusal([wall], { inputTokens: 1, costUsd: null }, 100)?.spent.limit, 'wallMs');
  });

  it('holds the estimated cost to what is left of costUsd; an unpriced model is not held', () => {
    const cost = row({ budget: JSON.stringify({ costUsd: 1 }), subtree_cost_usd: 0.9 });
    assert.equal(refusal([cost], { inputTokens: 1, costUsd: 0.09 }, 1), null);
    assert.equal(refusal([cost], { inputTokens: 1, costUsd: 0.11 }, 1)?.spent.limit, 'costUsd');
    assert.equal(refusal([cost], { inputTokens: 1e9, costUsd: null }, 1), null);
  });

  it('checks every budget that covers the caller, nearest first', () => {
    const loose = row({ id: 'ses_own', budget: JSON.stringify({ inputTokens: 1e6 }) });
    const tight = row({ id: 'ses_up', subtree_input_tokens: 999 });
    assert.equal(refusal([loose, tight], { inputTokens: 2, costUsd: null }, 1)?.budgetOf, 'ses_up');
  });

  it('estimates one token per 4 bytes of the body', () => {
    assert.equal(estimateInputTokens(0), 0);
    assert.equal(estimateInputTokens(4), 1);
    assert.equal(estimateInputTokens(27_621), 6906);
  });
});

describe('prices', () => {
  it('an exact id, else the longest prefix; none is null', () => {
    const table = { ...DEFAULT_PRICES, 'claude-opus-4-5-20251101': { input: 1, output: 2 } };
    assert.deepEqual(priceOf(table, 'claude-opus-4-5-20251101'), { input: 1, output: 2 });
    assert.deepEqual(priceOf(table, 'claude-opus-4-6'), { input: 5, output: 25 });
    assert.deepEqual(priceOf(table, 'claude-opus-4-1-20250805'), { input: 15, output: 75 });
    assert.equal(priceOf(table, 'mistral-large'), null);
    // GPT-5 point releases are named apart: a later one is not priced as the first.
    assert.deepEqual(priceOf(table, 'gpt-5-2025-08-07'), { input: 1.25, output: 10 });
    assert.deepEqual(priceOf(table, 'gpt-5-mini'), { input: 0.25, output: 2 });
    assert.equal(priceOf(table, 'gpt-5.5'), null);
  });

  it('cache reads and writes at 0.1× and 1.25× input unless given', () => {
    const u = { inputTokens: 1e6, outputTokens: 1e6, cacheReadTokens: 1e6, cacheWriteTokens: 1e6 };
    assert.equal(costOf({ input: 3, output: 15 }, u), 3 + 15 + 0.3 + 3.75);
    assert.equal(costOf({ input: 3, output: 15, cacheRead: 1, cacheWrite: 2 }, u), 3 + 15 + 1 + 2);
    assert.equal(costOf(null, u), null);
  });
});

describe('held upstreams', () => {
  const up = { baseUrl: 'https://api.example', key: 'k', auth: 'x-api-key' as const };
  const S = { zone: 'z', scope: ['ses_b'] };

  it('belong to one token generation; an older agent’s release leaves a newer one’s', () => {
    const u = new Upstreams();
    u.hold('s', 0, S, 'anthropic', up);
    assert.deepEqual(u.get('s', 0, 'anthropic'), { ...S, upstream: up });
    assert.equal(u.get('s', 1, 'anthropic'), null);
    u.hold('s', 1, S, 'anthropic', { ...up, key: 'k1' });
    assert.equal(u.get('s', 0, 'anthropic'), null);
    u.release('s', 0);
    assert.equal(u.get('s', 1, 'anthropic')?.upstream.key, 'k1');
    u.release('s');
    assert.equal(u.get('s', 1, 'anthropic'), null);
    assert.equal(u.size, 0);
  });

  it('die in the commit that stops or suspends their session', () => {
    const g = new ModelGateway({} as Core);
    for (const id of ['a', 'b', 'c']) g.upstreams.hold(id, 0, S, 'anthropic', up);
    const status = (id: string, to: string) => ({ type: 'session.status', session_id: id, payload: { to } });
    g.onCommit([
      status('a', 'stopped'),
      status('b', 'idle'),
      status('c', 'suspended'),
    ] as unknown as LogEvent[]);
    assert.equal(g.upstreams.get('a', 0, 'anthropic'), null);
    assert.ok(g.caller('b', 0, 'anthropic'));
    assert.throws(() => g.caller('c', 0, 'anthropic'), /not \(or no longer\) valid/);
  });

  it('send the held key upstream and drop every credential the agent sent', () => {
    const h = upstreamHeaders(
      {
        'x-api-key': 'wst_agent',
        authorization: 'Bearer wst_agent',
        cookie: 'c',
        host: 'warren',
        'accept-encoding': 'gzip',
        'anthropic-version': '2023-06-01',
        'content-length': '999',
      },
      up,
      12,
    );
    assert.deepEqual(h, {
      'anthropic-version': '2023-06-01',
      'content-length': '12',
      'accept-encoding': 'identity',
      'x-api-key': 'k',
    });
    assert.equal(upstreamHeaders({}, { ...up, auth: 'bearer' }, 0).authorization, 'Bearer k');
  });
});

describe('Claude Code’s environment behind the gateway', () => {
  const held: unknown[] = [];
  const gateway: AgentGateway = {
    url: (p) => `http://warren/v1/gateway/${p}`,
    credential: 'wst_s.0.mac',
    hold: (p, u) => held.push([p, u]),
  };

  it('holds the key and URL it would have used, and gives the CLI the gateway and its credential', () => {
    const out = throughGateway(
      {
        PATH: '/bin',
        ANTHROPIC_API_KEY: 'sk-real',
        ANTHROPIC_BASE_URL: 'http://mock',
        CLAUDE_CODE_OAUTH_TOKEN: 'o',
      },
      gateway,
    );
    assert.deepEqual(out, {
      env: {
        PATH: '/bin',
        ANTHROPIC_BASE_URL: 'http://warren/v1/gateway/anthropic',
        ANTHROPIC_API_KEY: 'wst_s.0.mac',
      },
      apiBase: 'http://mock',
      metered: true,
    });
    assert.deepEqual(held.pop(), [
      'anthropic',
      { baseUrl: 'http://mock', key: 'sk-real', auth: 'x-api-key' },
    ]);
    const token = throughGateway({ ANTHROPIC_AUTH_TOKEN: 'tok' }, gateway);
    assert.equal(token.env.ANTHROPIC_AUTH_TOKEN, undefined);
    assert.deepEqual(held.pop(), [
      'anthropic',
      { baseUrl: 'https://api.anthropic.com', key: 'tok', auth: 'bearer' },
    ]);
  });

  it('leaves an agent without a key, or without a gateway, as it was', () => {
    const oauth = { CLAUDE_CODE_OAUTH_TOKEN: 'o' };
    assert.deepEqual(throughGateway(oauth, gateway), {
      env: oauth,
      apiBase: 'https://api.anthropic.com',
      metered: false,
    });
    const keyed = { ANTHROPIC_API_KEY: 'sk' };
    assert.deepEqual(throughGateway(keyed, null).env, keyed);
    assert.equal(held.length, 0);
  });
});

describe('the upstream the server holds for an agent on a runner', () => {
  const spec = (env: Record<string, string>, config: Record<string, unknown> = {}) => ({
    prompt: null,
    config,
    cwd: null,
    model: null,
    env,
  });

  it('is what the runtime would hold, from the spawn alone: claude-code’s Anthropic, codex’s OpenAI', () => {
    assert.deepEqual(
      runnerUpstream('claude-code', spec({ ANTHROPIC_API_KEY: 'sk', ANTHROPIC_BASE_URL: 'http://m' })),
      {
        provider: 'anthropic',
        upstream: { baseUrl: 'http://m', key: 'sk', auth: 'x-api-key' },
      },
    );
    assert.deepEqual(runnerUpstream('codex', spec({ OPENAI_API_KEY: 'sk-o' })), {
      provider: 'openai',
      upstream: { baseUrl: OPENAI_API, key: 'sk-o', auth: 'bearer' },
    });
    assert.deepEqual(
      runnerUpstream('codex', spec({ MY_KEY: 'k' }, { baseUrl: 'http://local/v1', apiKeyEnv: 'MY_KEY' })),
      { provider: 'openai', upstream: { baseUrl: 'http://local/v1', key: 'k', auth: 'bearer' } },
    );
  });

  it('is none without a key in the spawn, for another runtime, or for a config the runtime refuses', () => {
    assert.equal(runnerUpstream('claude-code', spec({ ANTHROPIC_BASE_URL: 'http://m' })), null);
    assert.equal(runnerUpstream('command', spec({ ANTHROPIC_API_KEY: 'sk' })), null);
    assert.equal(runnerUpstream('toString', spec({ ANTHROPIC_API_KEY: 'sk' })), null);
    assert.equal(runnerUpstream('codex', spec({ OPENAI_API_KEY: 'sk' }, { sandbox: 'nope' })), null);
  });
});

describe('the limiter per provider key', () => {
  const config = { ...defaultLimiterConfig(), concurrency: 2, retries: 3, maxRetryWaitMs: 1000 };

  it('waits as the provider says: retry-after-ms, retry-after in seconds or as a date, else backoff', () => {
    assert.equal(retryDelayMs({ 'retry-after-ms': '250', 'retry-after': '9' }, 0), 250);
    assert.equal(retryDelayMs({ 'retry-after': '2' }, 0), 2000);
    assert.equal(retryDelayMs({ 'retry-after': new Date(10_000).toUTCString() }, 0, 7000), 3000);
    assert.deepEqual(
      [0, 1, 2, 5].map((a) => retryDelayMs({}, a)),
      [500, 1000, 2000, 8000],
    );
    assert.equal(retryDelayMs({ 'retry-after': 'soon' }, 1), 1000);
  });

  it('holds calls past its concurrency in order, and hands a slot straight to the next', async () => {
    const l = new KeyLimiter(() => config);
    const signal = new AbortController().signal;
    const a = await l.acquire(signal);
    await l.acquire(signal);
    const order: string[] = [];
    const inLine = (name: string) =>
      l.acquire(signal).then((release) => {
        order.push(name);
        return release;
      });
    const c = inLine('c');
    const d = inLine('d');
    assert.equal(l.queueDepth, 2);
    a();
    a(); // twice is once
    await c;
    assert.deepEqual(order, ['c']);
    assert.equal(l.inFlight, 2);
    (await c)();
    await d;
    assert.deepEqual(order, ['c', 'd']);
    assert.equal(l.stats.queued, 2);
  });

  it('a call that gives up while queued leaves the queue', async () => {
    const l = new KeyLimiter(() => ({ ...config, concurrency: 1 }));
    const release = await l.acquire(new AbortController().signal);
    const ac = new AbortController();
    const waiting = l.acquire(ac.signal);
    ac.abort(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    assert.equal(l.queueDepth, 0);
    release();
    assert.equal(l.inFlight, 0);
  });

  it('a back-off the provider asked of one call holds every new call on the key', async () => {
    const l = new KeyLimiter(() => config);
    l.backOff(60_000);
    const ac = new AbortController();
    const other = l.acquire(ac.signal);
    setImmediate(() => ac.abort(new Error('still waiting')));
    await assert.rejects(other, /still waiting/);
    assert.equal(l.stats.waits, 1);
    assert.equal(l.inFlight, 0, 'the call that gave up kept its slot');
    const free = new KeyLimiter(() => config);
    (await free.acquire(new AbortController().signal))();
    assert.equal(free.stats.waits, 0);
  });

  it('one key, one limiter, whichever session holds it; another key, another', () => {
    const ls = new Limiters(() => config);
    const up = { baseUrl: 'https://a', key: 'k', auth: 'x-api-key' as const };
    assert.equal(ls.of(up), ls.of({ ...up }));
    assert.notEqual(ls.of(up), ls.of({ ...up, key: 'k2' }));
    assert.equal(ls.size, 2);
  });
});

describe('pacing per provider key', () => {
  const cfg = (rpm: number, tpm: number) => ({ rpm, tpm });

  it('holds a call past the requests per minute until the oldest leaves the minute', () => {
    const p = new Pace();
    p.take(0, 1000);
    p.take(0, 2000);
    assert.equal(p.waitMs(0, 3000, cfg(3, 0)), 0);
    assert.equal(p.waitMs(0, 3000, cfg(2, 0)), 58_000);
    assert.equal(p.waitMs(0, 60_500, cfg(2, 0)), 500);
    assert.equal(p.waitMs(0, 61_000, cfg(2, 0)), 0);
    assert.equal(p.waitMs(0, 3000, cfg(0, 0)), 0, '0 is no limit');
  });

  it('holds a call past the tokens per minute, counting answers’ corrections; a huge call goes alone', () => {
    const p = new Pace();
    p.take(600, 0);
    p.take(300, 10_000);
    assert.equal(p.waitMs(100, 20_000, cfg(0, 1000)), 0);
    assert.equal(p.waitMs(200, 20_000, cfg(0, 1000)), 40_000);
    // The first call used 500 fewer than estimated: room now.
    p.count(-500, 15_000);
    assert.equal(p.waitMs(200, 20_000, cfg(0, 1000)), 0);
    const q = new Pace();
    assert.equal(q.waitMs(5000, 0, cfg(0, 1000)), 0, 'alone on the key, it goes');
    q.take(5000, 0);
    assert.equal(q.waitMs(1, 1000, cfg(0, 1000)), 59_000);
  });

  it('holds calls while the provider says none are left, until its reset (both providers’ headers)', () => {
    const p = new Pace();
    p.heard({ 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '2s' }, 0);
    assert.equal(p.waitMs(0, 0, cfg(0, 0)), 0);
    p.take(0, 0); // the one left is spent here, before the next answer says so
    assert.equal(p.waitMs(0, 500, cfg(0, 0)), 1500);
    assert.equal(p.waitMs(0, 2000, cfg(0, 0)), 0);
    const a = new Pace();
    a.heard(
      {
        'anthropic-ratelimit-tokens-remaining': '100',
        'anthropic-ratelimit-tokens-reset': new Date(30_000).toISOString(),
      },
      0,
    );
    assert.equal(a.waitMs(50, 0, cfg(0, 0)), 0);
    assert.equal(a.waitMs(150, 0, cfg(0, 0)), 30_000);
  });

  it('reads reset times: OpenAI’s durations, Anthropic’s dates, bare seconds', () => {
    assert.equal(resetTime('6m0s', 0), 360_000);
    assert.equal(resetTime('1h2m3.5s', 0), 3_723_500);
    assert.equal(resetTime('20ms', 5), 25);
    assert.equal(resetTime('2', 0), 2000);
    assert.equal(resetTime('2026-01-01T00:00:10Z', 0), Date.parse('2026-01-01T00:00:10Z'));
    assert.equal(resetTime('soon', 0), null);
  });
});

describe('the circuit breaker per provider key', () => {
  const cfg = { breakerFailures: 2, breakerCoolMs: 1000 };

  it('opens after failures in a row, refuses at once, lets one probe through after the cool-down', () => {
    const b = new Breaker();
    assert.equal(b.admit(0, cfg), false);
    assert.equal(b.outcome(false, '502', false, 0, cfg), null);
    assert.equal(b.outcome(true, '200', false, 0, cfg), null, 'a success starts the count again');
    assert.equal(b.outcome(false, '502', false, 0, cfg), null);
    assert.deepEqual(b.outcome(false, 'ECONNREFUSED', false, 10, cfg), {
      state: 'open',
      failures: 2,
      cause: 'ECONNREFUSED',
      until: 1010,
    });
    assert.throws(
      () => b.admit(500, cfg),
      (e: unknown) =>
        e instanceof BreakerOpen && e.waitMs === 510 && /2 calls in a row .*ECONNREFUSED/.test(e.message),
    );
    assert.equal(b.admit(1010, cfg), true, 'the probe');
    assert.throws(() => b.admit(1011, cfg), /half-open/);
    // The probe fails: open again for another cool-down.
    assert.equal(b.outcome(false, '503', true, 1100, cfg)?.until, 2100);
    assert.equal(b.admit(2100, cfg), true);
    b.abandon(true); // its agent went away: the next call probes
    assert.equal(b.admit(2200, cfg), true);
    assert.deepEqual(b.outcome(true, '200', true, 2300, cfg), { state: 'closed', failures: 3, cause: '503' });
    assert.equal(b.open, false);
    assert.equal(b.admit(2300, cfg), false);
    assert.deepEqual(b.stats, { opened: 2, refused: 2 });
  });

  it('never opens with breakerFailures 0', () => {
    const b = new Breaker();
    const off = { breakerFailures: 0, breakerCoolMs: 1000 };
    for (let i = 0; i < 10; i++) assert.equal(b.outcome(false, '500', false, 0, off), null);
    assert.equal(b.admit(0, off), false);
  });
});

describe('the gateway in `warren status`', () => {
  const g = {
    enabled: true,
    keys: 1,
    inFlight: 3,
    queued: 0,
    queuedTotal: 12,
    retries: 4,
    waits: 2,
  };
  it('shows pacing and breakers, and a server older than the CLI without them', () => {
    assert.equal(
      gatewayLine({ ...g, paced: 1, pacedTotal: 5, breakersOpen: 1, breakerOpened: 2, breakerRefused: 7 }),
      'on; 1 provider key: 3 in flight, 0 queued, 1 paced, 1 breaker open; since start 12 queued, 4 retries, 2 back-off waits, 5 paced, breakers opened 2 times (7 calls refused)',
    );
    assert.equal(
      gatewayLine(g),
      'on; 1 provider key: 3 in flight, 0 queued; since start 12 queued, 4 retries, 2 back-off waits',
    );
  });
});

describe('Codex behind the gateway', () => {
  const held: unknown[] = [];
  const gateway: AgentGateway = {
    url: (p) => `http://warren/v1/gateway/${p}`,
    credential: 'wst_s.0.mac',
    hold: (p, u) => held.push([p, u]),
  };

  it('holds the key and URL it would have used; the CLI’s provider is the gateway, its key the token', () => {
    const out = codexThroughGateway(
      { PATH: '/bin', OPENAI_API_KEY: 'sk-o', CODEX_API_KEY: 'sk-c', OPENAI_BASE_URL: 'http://mock/v1' },
      { model: 'm' },
      gateway,
      'WARREN_TOKEN',
    );
    assert.deepEqual(out, {
      env: { PATH: '/bin', WARREN_TOKEN: 'wst_s.0.mac' },
      settings: { model: 'm', baseUrl: 'http://warren/v1/gateway/openai/v1', apiKeyEnv: 'WARREN_TOKEN' },
      metered: true,
    });
    // CODEX_API_KEY first, as `codex exec` reads it.
    assert.deepEqual(held.pop(), ['openai', { baseUrl: 'http://mock/v1', key: 'sk-c', auth: 'bearer' }]);
    // A provider of its own: its URL, and the key its apiKeyEnv names.
    const own = codexThroughGateway(
      { MY_KEY: 'sk-mine', OPENAI_API_KEY: 'sk-o' },
      {
        baseUrl: 'http://local/v1',
        apiKeyEnv: 'MY_KEY',
        provider: { request_max_retries: 0, base_url: 'http://elsewhere/v1', env_key: 'MY_KEY' },
      },
      gateway,
      'WARREN_TOKEN',
    );
    assert.deepEqual(own.env, { WARREN_TOKEN: 'wst_s.0.mac' });
    assert.deepEqual(own.settings.provider, { request_max_retries: 0 });
    assert.deepEqual(held.pop(), ['openai', { baseUrl: 'http://local/v1', key: 'sk-mine', auth: 'bearer' }]);
    codexThroughGateway({ OPENAI_API_KEY: 'sk-o' }, {}, gateway, 'WARREN_TOKEN');
    assert.deepEqual(held.pop(), ['openai', { baseUrl: OPENAI_API, key: 'sk-o', auth: 'bearer' }]);
  });

  it('leaves an agent without a key to hold, or without a gateway, as it was', () => {
    const keyless = { baseUrl: 'http://local/v1' };
    const env = { OPENAI_API_KEY: 'sk-o' };
    assert.deepEqual(codexThroughGateway(env, keyless, gateway, 'T'), {
      env,
      settings: keyless,
      metered: false,
    });
    assert.deepEqual(codexThroughGateway({}, {}, gateway, 'T'), { env: {}, settings: {}, metered: false });
    assert.deepEqual(codexThroughGateway(env, {}, null, 'T'), { env, settings: {}, metered: false });
    assert.equal(held.length, 0);
  });

  it('reads usage from response.completed however the stream is cut; cached input is a cache read', () => {
    const text = [
      'event: response.created\ndata: {"type":"response.created","response":{"model":"gpt-5","usage":null}}\n\n',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"response.completed é"}\n\n',
      'event: response.completed\ndata: {"type":"response.completed","response":{"model":"gpt-5-2025-08-07","usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":20},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":4}}}}\n\n',
    ].join('');
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const u = new AnswerUsage(OPENAI_USAGE, true);
      u.push(bytes.subarray(0, cut));
      u.push(bytes.subarray(cut));
      assert.deepEqual(u.end(), {
        inputTokens: 100,
        outputTokens: 9,
        cacheReadTokens: 20,
        cacheWriteTokens: 0,
      });
      assert.equal(u.model, 'gpt-5-2025-08-07');
    }
    const json = new AnswerUsage(OPENAI_USAGE, false);
    json.push(Buffer.from('{"model":"o3","usage":{"input_tokens":5,"output_tokens":2}}'));
    assert.deepEqual(json.end(), {
      inputTokens: 5,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    const none = new AnswerUsage(OPENAI_USAGE, true);
    none.push(Buffer.from(text.slice(0, text.indexOf('event: response.completed'))));
    assert.equal(none.end(), null, 'no usage before response.completed');
  });
});
