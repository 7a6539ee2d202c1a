import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerOf } from '../../../auth/authenticate.ts';
import { refusalText } from '../../../kernel/gateway/admit.ts';
import type { GatewayCaller } from '../../../kernel/gateway/gateway.ts';
import type { Warren } from '../../../syscalls/warren.ts';
import { WarrenError } from '../../../vocab/errors.ts';
import type { ErrorLog } from '../../../vocab/public-error.ts';
import { sendLimited } from './limited.ts';
import { responseHeaders, UpstreamClient } from './upstream.ts';
import { AnthropicUsage } from './usage.ts';

/**
 * The Anthropic Messages API at `/v1/gateway/anthropic` (docs/gateway.md): what Claude Code
 * calls, for agents whose `ANTHROPIC_BASE_URL` warren set. Each call is authenticated by the
 * session's credential, held to its budgets, re-sent with the session's real key to its
 * upstream, passed back byte for byte as it arrives, and metered from the provider's answer.
 */

export const ANTHROPIC_PREFIX = '/v1/gateway/anthropic';

/** Largest request body taken: the Messages API's own cap. */
export const GATEWAY_BODY_LIMIT = 32 * 1024 * 1024;

/** The API's error types by status, for the errors the gateway gives itself. */
const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  503: 'api_error',
};

/** An error in the shape the API (and so the agent's CLI) knows. */
function apiError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'application/json')
    .send(JSON.stringify({ type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message } }));
}

/** `"model"` as Claude Code sends it, first: read without parsing a body of a whole conversation. */
const LEADING_MODEL = /^\s*\{\s*"model"\s*:\s*"([^"\\]{1,200})"/;

function modelOf(body: Buffer): string {
  const m = LEADING_MODEL.exec(body.subarray(0, 300).toString('utf8'));
  if (m) return m[1]!;
  try {
    const v = JSON.parse(body.toString('utf8')) as { model?: unknown };
    return typeof v.model === 'string' ? v.model : '';
  } catch {
    return '';
  }
}

export function registerAnthropicGateway(app: FastifyInstance, warren: Warren, log: ErrorLog): void {
  const client = new UpstreamClient();
  app.addHook('onClose', async () => client.close());
  const gateway = warren.kernel.gateway;
  const pub = { config: { public: true } };

  /** The calling session, from the credential Claude Code sends (`x-api-key`, or a bearer). */
  const callerOf = (req: FastifyRequest): GatewayCaller => {
    warren.checkServing();
    const key = req.headers['x-api-key'];
    const credential = typeof key === 'string' ? key : bearerOf(req.headers.authorization);
    const claim = credential ? warren.tokens.verify(credential) : null;
    if (!claim) throw new WarrenError('unauthenticated', 'not a credential of this gateway');
    return gateway.caller(claim.sessionId, claim.gen, 'anthropic');
  };

  const failed = (reply: FastifyReply, error: unknown) => {
    if (error instanceof WarrenError) return apiError(reply, error.status, `warren: ${error.message}`);
    log.error({ err: error }, 'model gateway: internal error');
    return apiError(reply, 500, 'warren: internal error in the model gateway');
  };

  /** Forward one call; `metered`: a Messages call, whose usage is recorded. */
  const forward = (metered: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    let caller: GatewayCaller;
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let model = '';
    try {
      caller = callerOf(req);
      if (metered) {
        model = modelOf(body);
        if (caller.scope.length > 0) {
          const refused = await gateway.admit(caller, model, gateway.estimate(model, body.length));
          if (refused) return apiError(reply, 400, refusalText(refused));
        }
      }
    } catch (error) {
      return failed(reply, error);
    }
    reply.hijack();
    const path = req.url.slice(ANTHROPIC_PREFIX.length);
    const res = reply.raw;
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    let up: IncomingMessage;
    let release: () => void;
    try {
      const limited = await sendLimited(
        client,
        gateway.limiters.of(caller.upstream),
        warren.kernel.config.gateway,
        caller.upstream,
        { method: req.method, path, headers: req.headers, body, signal: ac.signal },
        (status, attempt, waitMs) =>
          void gateway
            .retried(caller, model, status, attempt, waitMs)
            .catch((error: unknown) => log.error({ err: error }, 'model gateway: retry not logged')),
      );
      up = limited.answer;
      release = limited.release;
    } catch (error) {
      // No answer upstream is no answer here: the agent's CLI sees the failure it would have
      // seen calling the provider itself (and warren's reach probe names the cause).
      if (!ac.signal.aborted)
        log.error({ err: error, session: caller.sessionId }, 'model gateway: the upstream did not answer');
      res.destroy();
      return;
    }
    // The key's slot is free once the answer has passed (or the agent went away).
    up.once('close', release);
    res.once('close', release);
    relay(up, res, caller, metered && up.statusCode === 200 ? model : null);
  };

  /**
   * The provider's answer passed through chunk by chunk (an SSE event reaches the agent as
   * soon as it arrives), its usage read on the way. Under a budget the answer ends once the
   * usage is recorded, so the agent's next call is held to it; otherwise it ends at once.
   */
  const relay = (up: IncomingMessage, res: ServerResponse, caller: GatewayCaller, model: string | null) => {
    res.writeHead(up.statusCode ?? 502, responseHeaders(up.headers));
    const sse = String(up.headers['content-type'] ?? '').startsWith('text/event-stream');
    const usage = model === null ? null : new AnthropicUsage(sse);
    up.on('data', (chunk: Buffer) => {
      usage?.push(chunk);
      // What arrived in one read goes out in one write (events stay whole, none waits).
      if (!res.writableCorked) {
        res.cork();
        process.nextTick(() => res.uncork());
      }
      if (!res.write(chunk)) {
        up.pause();
        res.once('drain', () => up.resume());
      }
    });
    up.once('error', () => res.destroy());
    res.once('close', () => {
      if (!up.complete) up.destroy();
    });
    // Metered once: when the answer is whole, or when it breaks off (the agent hung up, the
    // provider reset): what it had said it used by then is billed, so an agent cannot slip a
    // call past its budget by closing the stream before its end.
    let settled = false;
    const settle = (whole: boolean) => {
      if (settled) return;
      settled = true;
      const used = usage?.end() ?? null;
      const recorded = used
        ? gateway
            .meter(caller, 'anthropic', usage?.model ?? model ?? '', used)
            .catch((error: unknown) =>
              log.error({ err: error, session: caller.sessionId }, 'model gateway: usage not recorded'),
            )
        : null;
      if (!whole) return;
      if (recorded && caller.scope.length > 0) void recorded.finally(() => res.end());
      else res.end();
    };
    up.once('end', () => settle(true));
    up.once('close', () => settle(false));
  };

  app.register(async (scope) => {
    // What Fastify refuses before a handler runs (a body past the limit) in the API's shape too.
    scope.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 500) log.error({ err: error }, 'model gateway: internal error');
      return apiError(
        reply,
        status,
        `warren: ${status >= 500 ? 'internal error in the model gateway' : error.message}`,
      );
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: GATEWAY_BODY_LIMIT }, (_req, b, done) =>
      done(null, b),
    );
    // The CLI's reachability check of its base URL: answered here, nothing goes upstream.
    for (const url of [ANTHROPIC_PREFIX, `${ANTHROPIC_PREFIX}/`]) {
      scope.route({ method: ['GET', 'HEAD'], url, ...pub, handler: async (_req, reply) => reply.send() });
    }
    scope.post(`${ANTHROPIC_PREFIX}/v1/messages`, pub, forward(true));
    scope.post(`${ANTHROPIC_PREFIX}/v1/messages/count_tokens`, pub, forward(false));
    scope.get(`${ANTHROPIC_PREFIX}/v1/models`, pub, forward(false));
    scope.get(`${ANTHROPIC_PREFIX}/v1/models/:id`, pub, forward(false));
    // Batches, files and the rest would spend the key unmetered: not offered.
    scope.all(`${ANTHROPIC_PREFIX}/*`, pub, async (req, reply) =>
      apiError(
        reply,
        404,
        `warren's model gateway does not offer ${req.method} ${req.url.slice(ANTHROPIC_PREFIX.length).split('?')[0]}`,
      ),
    );
  });
}
