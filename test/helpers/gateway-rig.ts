/**
 * A warren with one idle session whose Anthropic upstream is the mock model API, held
 * directly (as a claude-code agent's start would), and a client of its model gateway.
 */
import { request as httpRequest } from 'node:http';
import type { GatewayConfig } from '../../src/kernel/gateway/config.ts';
import { defaultGatewayConfig } from '../../src/kernel/gateway/config.ts';
import type { Upstream } from '../../src/kernel/gateway/upstreams.ts';
import { type HttpWarren, startHttp } from './http.ts';
import { type MockAnthropic, type MockOptions, type Script, startMockAnthropic } from './mock-anthropic.ts';
import { idleScript, type WarrenTarget, waitStatus } from './warrens.ts';

export const KEY = 'sk-ant-held-by-warren';
export const PATH = '/v1/gateway/anthropic/v1/messages';
export const BODY = {
  model: 'claude-sonnet-4-5',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hi' }],
};

export interface Rig {
  h: HttpWarren;
  mock: MockAnthropic;
  id: string;
  token: string;
}

export async function rig(
  t: WarrenTarget,
  script: Script,
  up: Partial<Upstream> = {},
  opts: { mock?: MockOptions; gateway?: Partial<GatewayConfig> } = {},
): Promise<Rig> {
  const mock = await startMockAnthropic(script, { sideRequests: 'script', ...opts.mock });
  const h = await startHttp(t, { kernel: { gateway: { ...defaultGatewayConfig(), ...opts.gateway } } });
  const close = h.warren.close.bind(h.warren);
  h.warren.close = async () => {
    await close();
    await mock.close();
  };
  const a = await h.api('POST', '/v1/sessions', { script: idleScript });
  const id = a.json.session.id as string;
  await waitStatus(h.warren, id, 'idle');
  h.warren.kernel.gateway.upstreams.hold(id, 0, { zone: 'default', scope: [] }, 'anthropic', {
    baseUrl: mock.url,
    key: KEY,
    auth: 'x-api-key',
    ...up,
  });
  return { h, mock, id, token: h.tokenOf(id) };
}

/** POST through the gateway; `onFirst` runs when the first bytes of the answer arrive. */
export function post(
  r: Rig,
  body: unknown,
  onFirst: () => void = () => {},
  path = PATH,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const url = new URL(path, r.h.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': r.token } },
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
