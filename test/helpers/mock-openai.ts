/**
 * A mock OpenAI Responses API on 127.0.0.1:<random port>, for driving the real `codex` CLI
 * without a network. `POST /v1/responses` answers what the test's script says: text, function
 * calls, or an error; with `stream: true` it streams the events the Responses API streams
 * (the ones codex reads: `response.created`, `response.output_item.added`,
 * `response.output_text.delta`, `response.output_item.done`, `response.completed` /
 * `response.failed`, plus the rest of the usual sequence). Every request is recorded;
 * unknown paths are recorded too and answered 404 (GET /v1/models gets an empty list).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Capacity, type Load, refusedAtCapacity } from './mock-capacity.ts';
import { replyDelay } from './reply-delay.ts';

// biome-ignore lint/suspicious/noExplicitAny: request bodies are whatever the client sent
type Any = any;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (or the raw text when it is not JSON). */
  body: Any;
  /** `body.input`: the conversation the client sent (messages, function_call, function_call_output…). */
  input: Any[];
  /** How many `/v1/responses` requests came before this one. */
  index: number;
}

export interface MockFunctionCall {
  name: string;
  /** An object (sent JSON-encoded) or an already-encoded string. */
  arguments: Record<string, unknown> | string;
  callId?: string;
  /** The tool namespace (codex puts an MCP server's tools in namespace `mcp__<server>`). */
  namespace?: string;
}

export interface MockReply {
  text?: string;
  calls?: MockFunctionCall[];
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cached_tokens?: number;
    reasoning_tokens?: number;
  };
  /** Fail the request: an HTTP error status (non-retryable when 4xx), or a `response.failed` event. */
  error?: { status?: number; message: string; code?: string; as?: 'http' | 'event' };
  /** Hold the answer back this long (to test stopping a busy turn). */
  delayMs?: number;
  /** Between one streamed event and the next (to see them pass one by one). */
  eventDelayMs?: number;
  /** The model the answer says answered (default `mock`). */
  model?: string;
  /** More headers on the answer (rate-limit headers, …). */
  headers?: Record<string, string>;
}

export type MockScript = (req: RecordedRequest) => MockReply | string | Promise<MockReply | string>;

export interface MockOpenAI {
  /** The base URL a client puts before `/responses`: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  /** Every `/v1/responses` request, in order. */
  readonly requests: RecordedRequest[];
  /** Every other request, as `METHOD /path`. */
  readonly unknown: string[];
  /** Replace the script. */
  script: MockScript;
  /** Streamed events written so far, over every answer. */
  readonly eventsWritten: number;
  /** The most `/v1/responses` calls it answered at once, and how many it refused at capacity (429). */
  readonly load: Load;
  close(): Promise<void>;
}

/** The text of every message item of `role` in a request's input, in order. */
export function messagesOf(req: RecordedRequest, role: string): string[] {
  return req.input
    .filter((i) => i?.type === 'message' && i.role === role)
    .map((i) =>
      typeof i.content === 'string'
        ? i.content
        : (i.content ?? []).map((c: Any) => (typeof c?.text === 'string' ? c.text : '')).join(''),
    );
}

/** The `function_call_output` items of a request's input. */
export function toolOutputsOf(req: RecordedRequest): { call_id: string; output: string }[] {
  return req.input
    .filter((i) => i?.type === 'function_call_output')
    .map((i) => ({
      call_id: String(i.call_id),
      output: typeof i.output === 'string' ? i.output : JSON.stringify(i.output),
    }));
}

export interface MockOpenAIOptions {
  /** Serve at most this many `/v1/responses` calls at once; past it, 429 (`retry-after` when given). */
  capacity?: Capacity;
}

export async function startMockOpenAI(
  script: MockScript = () => 'ok',
  opts: MockOpenAIOptions = {},
): Promise<MockOpenAI> {
  const load: Load = { inFlight: 0, most: 0, refused: 0 };
  const requests: RecordedRequest[] = [];
  const unknown: string[] = [];
  let seq = 0;
  const sockets = new Set<import('node:net').Socket>();

  let eventsWritten = 0;
  const mock: MockOpenAI = {
    baseUrl: '',
    requests,
    unknown,
    script,
    get eventsWritten() {
      return eventsWritten;
    },
    load,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String((error as Error)?.message ?? error) } }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'POST' && /\/responses$/.test(path)) {
      const busy = { error: { message: 'at capacity', type: 'rate_limit_exceeded', code: null } };
      if (refusedAtCapacity(res, load, opts.capacity, busy)) return;
      let body: Any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      const rec: RecordedRequest = {
        method: req.method,
        path,
        headers: req.headers,
        body,
        input: Array.isArray(body?.input) ? body.input : [],
        index: requests.length,
      };
      requests.push(rec);
      const got = await mock.script(rec);
      const reply: MockReply = typeof got === 'string' ? { text: got } : got;
      if (reply.delayMs) await replyDelay(reply.delayMs, res);
      if (res.destroyed) return; // the client hung up while it waited
      return answer(res, body?.stream === true, reply);
    }
    unknown.push(`${req.method} ${path}`);
    if (req.method === 'GET' && /\/models$/.test(path)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `mock-openai: no route for ${req.method} ${path}` } }));
  }

  async function answer(res: ServerResponse, stream: boolean, reply: MockReply): Promise<void> {
    const id = `resp_${++seq}`;
    if (reply.error && reply.error.as !== 'event') {
      res.writeHead(reply.error.status ?? 400, { 'content-type': 'application/json', ...reply.headers });
      res.end(
        JSON.stringify({
          error: {
            message: reply.error.message,
            type: 'invalid_request_error',
            code: reply.error.code ?? null,
          },
        }),
      );
      return;
    }
    const output = outputItems(reply, id);
    const u = reply.usage ?? {};
    const usage = {
      input_tokens: u.input_tokens ?? 10,
      input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      output_tokens: u.output_tokens ?? 5,
      output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
      total_tokens: (u.input_tokens ?? 10) + (u.output_tokens ?? 5),
    };
    const base = {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: reply.model ?? 'mock',
    };
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify({ ...base, status: 'completed', output, usage }));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    const events: string[] = [];
    const send = (type: string, data: Record<string, unknown>) =>
      events.push(
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: events.length, ...data })}\n\n`,
      );
    send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
    send('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
    if (reply.error) {
      send('response.failed', {
        response: {
          ...base,
          status: 'failed',
          output: [],
          error: { code: reply.error.code ?? 'server_error', message: reply.error.message },
        },
      });
      return write(res, events, reply.eventDelayMs);
    }
    output.forEach((item, output_index) => {
      if (item.type === 'message') {
        const t: string = item.content[0].text;
        send('response.output_item.added', {
          output_index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        const part = { type: 'output_text', text: '', annotations: [] };
        send('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
        for (const delta of chunks(t)) {
          send('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta });
        }
        send('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text: t });
        send('response.content_part.done', {
          item_id: item.id,
          output_index,
          content_index: 0,
          part: { ...part, text: t },
        });
      } else {
        send('response.output_item.added', {
          output_index,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        send('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index,
          delta: item.arguments,
        });
        send('response.function_call_arguments.done', {
          item_id: item.id,
          output_index,
          arguments: item.arguments,
        });
      }
      send('response.output_item.done', { output_index, item });
    });
    send('response.completed', { response: { ...base, status: 'completed', output, usage } });
    return write(res, events, reply.eventDelayMs);
  }

  async function write(res: ServerResponse, events: string[], delayMs = 0): Promise<void> {
    for (const [i, e] of events.entries()) {
      if (i > 0 && delayMs) await replyDelay(delayMs, res);
      if (res.destroyed) return;
      res.write(e);
      eventsWritten++;
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (mock as { baseUrl: string }).baseUrl = `http://127.0.0.1:${port}/v1`;
  return mock;
}

function outputItems(reply: MockReply, id: string): Any[] {
  const out: Any[] = [];
  if (reply.text !== undefined) {
    out.push({
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  (reply.calls ?? []).forEach((c, i) => {
    out.push({
      id: `fc_${id}_${i}`,
      type: 'function_call',
      status: 'completed',
      call_id: c.callId ?? `call_${id}_${i}`,
      name: c.name,
      ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    });
  });
  return out;
}

function chunks(text: string): string[] {
  if (text.length <= 8) return [text];
  const mid = Math.ceil(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      s += c;
    });
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
}
