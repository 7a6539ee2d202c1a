import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refusalText } from '../../../kernel/gateway/admit.ts';
import { BreakerOpen } from '../../../kernel/gateway/breaker.ts';
import type { GatewayCaller } from '../../../kernel/gateway/gateway.ts';
import type { ModelUsage } from '../../../kernel/gateway/prices.ts';
import type { Warren } from '../../../syscalls/warren.ts';
import { WarrenError } from '../../../vocab/errors.ts';
import type { ErrorLog } from '../../../vocab/public-error.ts';
import { ANTHROPIC } from './anthropic.ts';
import type { GatewayDialect } from './dialect.ts';
import { sendLimited } from './limited.ts';
import { OPENAI } from './openai.ts';
import { responseHeaders, UpstreamClient } from './upstream.ts';
import { AnswerUsage } from './usage.ts';

/**
 * The model gateway's HTTP half (docs/gateway.md): each provider's API under
 * `/v1/gateway/<provider>` (anthropic.ts, openai.ts). Each call is authenticated by the
 * session's credential, held to its budgets, re-sent with the session's real key to its
 * upstream under the key's limiter, passed back byte for byte as it arrives, and metered
 * from the provider's answer.
 */

/** Largest request body taken: the Messages API's own cap. */
export const GATEWAY_BODY_LIMIT = 32 * 1024 * 1024;

/** `"model"` as the CLIs send it, first: read without parsing a body of a whole conversation. */
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

export function registerModelGateway(app: FastifyInstance, warren: Warren, log: ErrorLog): void {
  const client = new UpstreamClient();
  app.addHook('onClose', async () => client.close());
  for (const dialect of [ANTHROPIC, OPENAI]) registerDialect(app, warren, log, client, dialect);
}

function registerDialect(
  app: FastifyInstance,
  warren: Warren,
  log: ErrorLog,
  client: UpstreamClient,
  d: GatewayDialect,
): void {
  const gateway = warren.kernel.gateway;
  const pub = { config: { public: true } };

  /** An error in the shape the API (and so the agent's CLI) knows. */
  const apiError = (reply: FastifyReply, status: number, message: string) =>
    reply.status(status).header('content-type', 'application/json').send(d.error(status, message));

  /** The calling session, from the credential its CLI sends. */
  const callerOf = (req: FastifyRequest): GatewayCaller => {
    warren.checkServing();
    const credential = d.credential(req.headers);
    const claim = credential ? warren.tokens.verify(credential) : null;
    if (!claim) throw new WarrenError('unauthenticated', 'not a credential of this gateway');
    return gateway.caller(claim.sessionId, claim.gen, d.provider);
  };

  const failed = (reply: FastifyReply, error: unknown) => {
    if (error instanceof WarrenError) return apiError(reply, error.status, `warren: ${error.message}`);
    log.error({ err: error }, 'model gateway: internal error');
    return apiError(reply, 500, 'warren: internal error in the model gateway');
  };

  /** Forward one call; `metered`: a model call, whose usage is recorded. */
  const forward = (metered: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    let caller: GatewayCaller;
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let model = '';
    let inputTokens = 0;
    try {
      caller = callerOf(req);
      if (metered) {
        model = modelOf(body);
        const estimate = gateway.estimate(model, body.length);
        inputTokens = estimate.inputTokens;
        if (caller.scope.length > 0) {
          const refused = await gateway.admit(caller, model, estimate);
          if (refused) return apiError(reply, 400, refusalText(refused));
        }
      }
    } catch (error) {
      return failed(reply, error);
    }
    const limiter = gateway.limiters.of(caller.upstream);
    const ac = new AbortController();
    const res = reply.raw;
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    let up: IncomingMessage;
    let release: () => void;
    try {
      const limited = await sendLimited(
        client,
        limiter,
        warren.kernel.config.gateway,
        caller.upstream,
        {
          method: req.method,
          path: req.url.slice(d.mount.length),
          headers: req.headers,
          body,
          signal: ac.signal,
        },
        inputTokens,
        {
          retry: (status, attempt, waitMs) =>
            void gateway
              .retried(caller, model, status, attempt, waitMs)
              .catch((error: unknown) => log.error({ err: error }, 'model gateway: retry not logged')),
          breaker: (change) =>
            void gateway
              .breaker(caller, d.provider, change)
              .catch((error: unknown) => log.error({ err: error }, 'model gateway: breaker not logged')),
        },
      );
      up = limited.answer;
      release = limited.release;
    } catch (error) {
      // The key's breaker is open: said at once, in the API's shape, with when to come back.
      if (error instanceof BreakerOpen) {
        reply.header('retry-after', String(Math.max(1, Math.ceil(error.waitMs / 1000))));
        return apiError(reply, 503, `warren: ${error.message}`);
      }
      // No answer upstream is no answer here: the agent's CLI sees the failure it would have
      // seen calling the provider itself (and warren's reach probe names the cause).
      if (!ac.signal.aborted)
        log.error({ err: error, session: caller.sessionId }, 'model gateway: the upstream did not answer');
      reply.hijack();
      res.destroy();
      return;
    }
    reply.hijack();
    // The key's slot is free once the answer has passed (or the agent went away).
    up.once('close', release);
    res.once('close', release);
    const meter = metered && up.statusCode === 200 ? { model, inputTokens } : null;
    // The key's minute counts what the provider counted (cached input too), not the estimate.
    relay(up, res, caller, meter, (u) =>
      limiter.spent(u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens - inputTokens),
    );
  };

  /**
   * The provider's answer passed through chunk by chunk (an SSE event reaches the agent as
   * soon as it arrives), its usage read on the way. Under a budget the answer ends once the
   * usage is recorded, so the agent's next call is held to it; otherwise it ends at once.
   */
  const relay = (
    up: IncomingMessage,
    res: ServerResponse,
    caller: GatewayCaller,
    meter: { model: string; inputTokens: number } | null,
    counted: (used: ModelUsage) => void,
  ) => {
    res.writeHead(up.statusCode ?? 502, responseHeaders(up.headers));
    const sse = String(up.headers['content-type'] ?? '').startsWith('text/event-stream');
    const usage = meter === null ? null : new AnswerUsage(d.usage, sse);
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
    // provider reset): what it had said it used by then is billed, or, when it had said
    // nothing yet (OpenAI says it at the end), the input estimated before the call, so an
    // agent cannot slip a call past its budget by closing the stream before its end.
    let settled = false;
    const settle = (whole: boolean) => {
      if (settled) return;
      settled = true;
      let used = usage?.end() ?? null;
      let estimated = false;
      if (!used && !whole && meter) {
        used = { inputTokens: meter.inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
        estimated = true;
      }
      if (used) counted(used);
      const recorded = used
        ? gateway
            .meter(caller, d.provider, usage?.model ?? meter?.model ?? '', used, estimated)
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
    // A CLI's reachability check of its base URL: answered here, nothing goes upstream.
    for (const url of [d.prefix, `${d.prefix}/`]) {
      scope.route({ method: ['GET', 'HEAD'], url, ...pub, handler: async (_req, reply) => reply.send() });
    }
    for (const r of d.routes)
      scope.route({ method: r.method, url: d.prefix + r.path, ...pub, handler: forward(r.metered) });
    // Batches, files and the rest would spend the key unmetered: not offered.
    scope.all(`${d.prefix}/*`, pub, async (req, reply) =>
      apiError(
        reply,
        404,
        `warren's model gateway does not offer ${req.method} ${req.url.slice(d.prefix.length).split('?')[0]}`,
      ),
    );
  });
}
