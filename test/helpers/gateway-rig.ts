/**
 * A warren with one idle session whose upstream is a mock model API (Anthropic's, or
 * OpenAI's Responses API), held directly (as a claude-code or codex agent's start would),
 * and a client of its model gateway.
 */
import { request as httpRequest } from 'node:http';
import type { GatewayConfig } from '../../src/kernel/gateway/config.ts';
import { defaultGatewayConfig } from '../../src/kernel/gateway/config.ts';
import type { Upstream } from '../../src/kernel/gateway/upstreams.ts';
import { type HttpWarren, startHttp } from './http.ts';
import { type MockAnthropic, type MockOptions, type Script, startMockAnthropic } from './mock-anthropic.ts';
import { type MockOpenAI, type MockScript, startMockOpenAI } from './mock-openai.ts';
import { eventsOf, idleScript, until, type WarrenTarget, waitStatus } from './warrens.ts';

export const KEY = 'sk-ant-held-by-warren';
export const PATH = '/v1/gateway/anthropic/v1/messages';
export const BODY = {
  model: 'claude-sonnet-4-5',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hi' }],
};

export const OPENAI_PATH = '/v1/gateway/openai/v1/responses';
export const OPENAI_BODY = { model: 'gpt-5', input: [{ type: 'message', role: 'user', content: 'hi' }] };

interface RigOf<M> {
  h: HttpWarren;
  mock: M;
  id: string;
  token: string;
  /** The headers the agent's CLI sends its credential in. */
  auth: Record<string, string>;
}

export type Rig = RigOf<MockAnthropic>;
export type OpenAIRig = RigOf<MockOpenAI>;

/** A warren whose idle session's calls to `provider` go to `mock` (closed with the warren). */
async function rigWith<M extends { close(): Promise<void> }>(
  t: WarrenTarget,
  mock: M,
  provider: 'anthropic' | 'openai',
  up: Upstream,
  gateway: Partial<GatewayConfig> = {},
): Promise<RigOf<M>> {
  const h = await startHttp(t, { kernel: { gateway: { ...defaultGatewayConfig(), ...gateway } } });
  const close = h.warren.close.bind(h.warren);
  h.warren.close = async () => {
    await close();
    await mock.close();
  };
  const a = await h.api('POST', '/v1/sessions', { script: idleScript });
  const id = a.json.session.id as string;
  await waitStatus(h.warren, id, 'idle');
  h.warren.kernel.gateway.upstreams.hold(id, 0, { zone: 'default', scope: [] }, provider, up);
  const token = h.tokenOf(id);
  const auth: Record<string, string> =
    provider === 'anthropic' ? { 'x-api-key': token } : { authorization: `Bearer ${token}` };
  return { h, mock, id, token, auth };
}

export async function rig(
  t: WarrenTarget,
  script: Script,
  up: Partial<Upstream> = {},
  opts: { mock?: MockOptions; gateway?: Partial<GatewayConfig> } = {},
): Promise<Rig> {
  const mock = await startMockAnthropic(script, { sideRequests: 'script', ...opts.mock });
  return rigWith(
    t,
    mock,
    'anthropic',
    { baseUrl: mock.url, key: KEY, auth: 'x-api-key', ...up },
    opts.gateway,
  );
}

export async function openaiRig(
  t: WarrenTarget,
  script: MockScript,
  up: Partial<Upstream> = {},
  gateway: Partial<GatewayConfig> = {},
): Promise<OpenAIRig> {
  const mock = await startMockOpenAI(script);
  return rigWith(t, mock, 'openai', { baseUrl: mock.baseUrl, key: KEY, auth: 'bearer', ...up }, gateway);
}

/** POST through the gateway; `onFirst` runs when the first bytes of the answer arrive. */
export function post(
  r: RigOf<unknown>,
  body: unknown,
  onFirst: () => void = () => {},
  path = PATH,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const url = new URL(path, r.h.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...r.auth } },
      (res) => {
        let text = '';
        let first = true;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (first) onFirst();
          first = false;
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error('no answer in 20 s')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The session's `session.usage` events the gateway wrote. */
export const gatewayUsage = async (r: RigOf<unknown>) =>
  (await eventsOf(r.h, r.id)).filter((e) => e.type === 'session.usage' && e.payload.source === 'gateway');

/** Usage is recorded once the answer has passed (an unbudgeted answer does not wait for it). */
export const meteredUsage = (r: RigOf<unknown>, n = 1) =>
  until(
    async () => {
      const got = await gatewayUsage(r);
      return got.length >= n ? got : null;
    },
    10_000,
    `${n} gateway usage event(s)`,
  );

/** What a gateway usage event counted, and of which model. */
export const counted = (e: { payload: Record<string, unknown> }) => {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, model } = e.payload;
  return { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, model };
};
