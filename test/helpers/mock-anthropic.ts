/**
 * A scripted Anthropic Messages API on 127.0.0.1:<random port>, for running the real
 * `claude` CLI with no network: point it there with `ANTHROPIC_BASE_URL` (any
 * `ANTHROPIC_API_KEY` will do).
 *
 *   const mock = await startMockAnthropic((req) =>
 *     lastToolResult(req)?.name === 'mcp__warren__ipc_spawn'
 *       ? { toolUses: [{ name: 'mcp__warren__ipc_write', input: { fd: 3, text: 'hi' } }] }
 *       : { text: 'hello' },
 *   );
 *
 * `POST /v1/messages` answers as the API does: with `stream: true` an SSE stream
 * (`message_start`, `content_block_start` / `content_block_delta` (`text_delta`,
 * `input_json_delta`) / `content_block_stop`, `message_delta` with the stop reason and the
 * output usage, `message_stop`), otherwise one JSON message. The script decides each turn
 * from the request (the conversation so far); side requests the CLI makes on its own
 * (short, tool-less calls: titles, summaries) get a short text unless `sideRequests:
 * 'script'` is set. `count_tokens`, model listing and the startup `HEAD /` are answered
 * too; anything else gets a 404 in the API's error shape and is logged, so a new endpoint
 * shows up in the test output. Every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Capacity, type Load, refusedAtCapacity } from './mock-capacity.ts';
import { replyDelay } from './reply-delay.ts';

// ---------------------------------------------------------------- the API's shapes

export type ContentBlock =
  | { type: 'text'; text: string; [k: string]: unknown }
  | { type: 'tool_use'; id: string; name: string; input: unknown; [k: string]: unknown }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content?: string | Array<{ type: string; text?: string }>;
      is_error?: boolean;
      [k: string]: unknown;
    }
  | { type: string; [k: string]: unknown };

export interface ApiMessage {
  role: 'user' | 'assistant' | string;
  content: string | ContentBlock[];
}

export interface MessagesRequest {
  model: string;
  messages: ApiMessage[];
  system?: string | Array<{ type: string; text: string }>;
  tools?: Array<{ name: string; [k: string]: unknown }>;
  stream?: boolean;
  max_tokens?: number;
  [k: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  /** The path with its query string. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or null. */
  body: unknown;
  at: number;
}

// ---------------------------------------------------------------- what a script answers

export interface ToolUse {
  name: string;
  input: Record<string, unknown>;
  /** Default: a fresh `toolu_mock_<n>`. */
  id?: string;
}

export interface Reply {
  /** Assistant text (before any tool use). */
  text?: string;
  toolUses?: ToolUse[];
  /** Default: `tool_use` when there are tool uses, else `end_turn`. */
  stopReason?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Wait this long before answering. */
  delayMs?: number;
  /** Stream: wait this long between events (the gateway must pass each on as it comes). */
  eventDelayMs?: number;
}

/** Answer with an API error (a 4xx the CLI does not retry makes its turn fail). */
export interface ErrorReply {
  error: { status: number; type: string; message: string };
}

export type Turn = Reply | ErrorReply;

/**
 * The API at capacity: 529 `overloaded_error`. Claude Code retries it (reporting each wait as a
 * `system`/`api_retry` line) and, after three in a row against a gateway, gives up.
 */
export const overloaded = (): ErrorReply => ({
  error: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
});

export interface ScriptInfo {
  /** 0-based index of this request among the main (scripted) ones. */
  index: number;
  mock: MockAnthropic;
  /** The request's headers (`x-claude-code-session-id` names the CLI's conversation). */
  headers: IncomingHttpHeaders;
  /** The request body's length in characters, as sent. */
  chars: number;
}

export type Script = (req: MessagesRequest, info: ScriptInfo) => Turn | Promise<Turn>;

export interface MockOptions {
  /** `auto` (default): side requests get a short text without asking the script. */
  sideRequests?: 'auto' | 'script';
  /** Log every request to stderr (default: only unknown ones). */
  verbose?: boolean;
  /**
   * A provider at its rate limit: past `concurrent` Messages calls in flight, a call is
   * answered 429 `rate_limit_error` (with `retry-after: retryAfterS` when given).
   */
  capacity?: Capacity;
}

export interface MockAnthropic {
  /** `http://127.0.0.1:<port>`: the `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** The `/v1/messages` calls the script answered, in order. */
  readonly messages: MessagesRequest[];
  /** The side requests answered automatically. */
  readonly side: MessagesRequest[];
  /** The most Messages calls it answered at once, and how many it refused at capacity (429). */
  readonly load: Load;
  /** How many SSE events the mock has written so far, over all streams. */
  readonly eventsWritten: number;
  /** Replace the script (e.g. between phases of a test). */
  setScript(script: Script): void;
  /** Resolve once `n` scripted requests have arrived. */
  waitForMessages(n: number, ms?: number): Promise<MessagesRequest[]>;
  /** The env a CLI needs to talk to this mock. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startMockAnthropic(script: Script, opts: MockOptions = {}): Promise<MockAnthropic> {
  const requests: RecordedRequest[] = [];
  const messages: MessagesRequest[] = [];
  const side: MessagesRequest[] = [];
  const waiters = new Set<() => void>();
  let current = script;
  let ids = 0;
  let eventsWritten = 0;
  const load: Load = { inFlight: 0, most: 0, refused: 0 };
  const nextId = (prefix: string) => `${prefix}_mock_${String(++ids).padStart(4, '0')}`;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const url = req.url ?? '/';
      const path = url.split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', url, headers: req.headers, body, at: Date.now() });
      if (opts.verbose) console.error(`mock-anthropic: ${req.method} ${url}`);

      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': nextId('req') });
        res.end(JSON.stringify(value));
      };

      if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
        res.writeHead(200);
        res.end();
        return;
      }
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        return json(200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
      }
      if (req.method === 'GET' && path === '/v1/models') {
        return json(200, {
          data: [MODEL_INFO],
          has_more: false,
          first_id: MODEL_INFO.id,
          last_id: MODEL_INFO.id,
        });
      }
      if (req.method === 'GET' && path.startsWith('/v1/models/')) {
        return json(200, { ...MODEL_INFO, id: decodeURIComponent(path.slice('/v1/models/'.length)) });
      }
      if (req.method === 'POST' && path === '/v1/messages' && body && typeof body === 'object') {
        const m = body as MessagesRequest;
        const busy = { type: 'error', error: { type: 'rate_limit_error', message: 'at capacity' } };
        if (refusedAtCapacity(res, load, opts.capacity, busy)) return;
        void answer(m, res, req.headers, raw.length).catch((error: unknown) => {
          console.error('mock-anthropic: the script failed:', error);
          if (!res.headersSent)
            json(500, { type: 'error', error: { type: 'api_error', message: String(error) } });
          else res.end();
        });
        return;
      }
      console.error(`mock-anthropic: unhandled ${req.method} ${url} ${raw.slice(0, 200)}`);
      json(404, { type: 'error', error: { type: 'not_found_error', message: `no mock for ${path}` } });
    });
  });

  async function answer(
    m: MessagesRequest,
    res: import('node:http').ServerResponse,
    headers: IncomingHttpHeaders,
    chars: number,
  ): Promise<void> {
    let turn: Turn;
    if (opts.sideRequests !== 'script' && isSideRequest(m)) {
      side.push(m);
      turn = { text: 'ok' };
    } else {
      const index = messages.length;
      messages.push(m);
      for (const w of [...waiters]) w();
      turn = await current(m, { index, mock, headers, chars });
    }
    if ('error' in turn) {
      res.writeHead(turn.error.status, { 'content-type': 'application/json', 'request-id': nextId('req') });
      res.end(
        JSON.stringify({ type: 'error', error: { type: turn.error.type, message: turn.error.message } }),
      );
      return;
    }
    if (turn.delayMs) await replyDelay(turn.delayMs, res);
    if (res.destroyed) return; // the client hung up while it waited
    const content: ContentBlock[] = [];
    if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
    for (const t of turn.toolUses ?? [])
      content.push({ type: 'tool_use', id: t.id ?? nextId('toolu'), name: t.name, input: t.input });
    if (content.length === 0) content.push({ type: 'text', text: '' });
    const stopReason = turn.stopReason ?? (turn.toolUses?.length ? 'tool_use' : 'end_turn');
    const inputTokens = turn.usage?.input_tokens ?? 10;
    const outputTokens = turn.usage?.output_tokens ?? 5;
    const cache = {
      ...(turn.usage?.cache_read_input_tokens !== undefined
        ? { cache_read_input_tokens: turn.usage.cache_read_input_tokens }
        : {}),
      ...(turn.usage?.cache_creation_input_tokens !== undefined
        ? { cache_creation_input_tokens: turn.usage.cache_creation_input_tokens }
        : {}),
    };
    const id = nextId('msg');
    const model = m.model;

    if (!m.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': nextId('req') });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: outputTokens, ...cache },
        }),
      );
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': nextId('req'),
    });
    const events: string[] = [];
    const send = (type: string, data: Record<string, unknown>) =>
      events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 1, ...cache },
      },
    });
    send('ping', {});
    content.forEach((block, index) => {
      if (block.type === 'text') {
        send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const piece of halves(String(block.text)))
          send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      } else {
        const b = block as { id: string; name: string; input: unknown };
        send('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        });
        for (const piece of halves(JSON.stringify(b.input)))
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
      send('content_block_stop', { index });
    });
    send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    });
    send('message_stop', {});
    for (const [i, e] of events.entries()) {
      if (i > 0 && turn.eventDelayMs) await replyDelay(turn.eventDelayMs, res);
      if (res.destroyed) return;
      res.write(e);
      eventsWritten++;
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const mock: MockAnthropic = {
    url,
    requests,
    messages,
    side,
    load,
    get eventsWritten() {
      return eventsWritten;
    },
    setScript(s) {
      current = s;
    },
    waitForMessages(n, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(messages.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`timed out after ${ms} ms waiting for ${n} model requests (got ${messages.length})`),
          );
        }, ms);
        waiters.add(check);
        check();
      });
    },
    env: () => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-mock-key' }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return mock;
}

const MODEL_INFO = {
  type: 'model',
  id: 'claude-mock-1',
  display_name: 'Claude Mock',
  created_at: '2025-01-01T00:00:00Z',
};

/** Split a string in two, so that deltas really are partial. */
function halves(s: string): string[] {
  if (s.length < 2) return [s];
  const mid = Math.floor(s.length / 2);
  return [s.slice(0, mid), s.slice(mid)];
}

/**
 * A request the CLI makes on its own (a title, a summary, a quota probe): no tools and a
 * small output budget. The main loop always offers tools.
 */
export function isSideRequest(req: MessagesRequest): boolean {
  return !req.tools?.length && (req.max_tokens ?? 0) <= 8192;
}

// ---------------------------------------------------------------- reading a conversation

/** The text of a message (text blocks joined; tool results included as their text). */
export function textOf(message: ApiMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((b) => {
      if (b.type === 'text') return String(b.text);
      if (b.type === 'tool_result') return resultText(b as ToolResultBlock);
      return '';
    })
    .join('\n');
}

/** The last user message's text, without the CLI's `<system-reminder>` blocks. */
export function lastUserText(req: MessagesRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content
    .filter((b) => b.type === 'text' && !String(b.text).trimStart().startsWith('<system-reminder>'))
    .map((b) => String(b.text))
    .join('\n');
}

/** Everything said so far, as one string: handy for `includes` checks. */
export function conversationText(req: MessagesRequest): string {
  return req.messages.map(textOf).join('\n');
}

type ToolResultBlock = Extract<ContentBlock, { type: 'tool_result' }>;

export interface ToolResult {
  /** The tool's name, from the assistant's `tool_use` with the same id. */
  name: string;
  toolUseId: string;
  /** The assistant's input to the call. */
  input: unknown;
  text: string;
  isError: boolean;
}

function resultText(b: ToolResultBlock): string {
  if (typeof b.content === 'string') return b.content;
  return (b.content ?? []).map((c) => c.text ?? '').join('\n');
}

function toolCalls(req: MessagesRequest): Map<string, { name: string; input: unknown }> {
  const calls = new Map<string, { name: string; input: unknown }>();
  for (const m of req.messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const b of m.content)
      if (b.type === 'tool_use') {
        const u = b as { id: string; name: string; input: unknown };
        calls.set(u.id, { name: u.name, input: u.input });
      }
  }
  return calls;
}

function resultsIn(message: ApiMessage, calls: Map<string, { name: string; input: unknown }>): ToolResult[] {
  if (typeof message.content === 'string') return [];
  return message.content
    .filter((b): b is ToolResultBlock => b.type === 'tool_result')
    .map((b) => ({
      name: calls.get(b.tool_use_id)?.name ?? '?',
      toolUseId: b.tool_use_id,
      input: calls.get(b.tool_use_id)?.input,
      text: resultText(b),
      isError: b.is_error === true,
    }));
}

/** The tool results in the last user message, named after the calls they answer. */
export function toolResults(req: MessagesRequest): ToolResult[] {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  return last ? resultsIn(last, toolCalls(req)) : [];
}

/** Every tool result in the conversation, oldest first. */
export function allToolResults(req: MessagesRequest): ToolResult[] {
  const calls = toolCalls(req);
  return req.messages.filter((m) => m.role === 'user').flatMap((m) => resultsIn(m, calls));
}

/** The first user message's text (the prompt), without `<system-reminder>` blocks. */
export function firstUserText(req: MessagesRequest): string {
  const first = req.messages.find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return first.content
    .filter((b) => b.type === 'text' && !String(b.text).trimStart().startsWith('<system-reminder>'))
    .map((b) => String(b.text))
    .join('\n');
}

/** The last tool result of the last user message, if it holds one. */
export function lastToolResult(req: MessagesRequest): ToolResult | undefined {
  const all = toolResults(req);
  return all[all.length - 1];
}

/** The names of the tools this request offers the model. */
export function toolNames(req: MessagesRequest): string[] {
  return (req.tools ?? []).map((t) => t.name);
}
