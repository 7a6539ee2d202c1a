import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { z } from 'zod';
import type { Syscall } from '../../contract/syscall.ts';
import { missingSyscall } from '../../syscalls/dispatch.ts';
import type { Warren } from '../../syscalls/warren.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type ErrorLog, stderrLog } from '../../vocab/public-error.ts';
import { ToolCatalog } from '../mcp/catalog.ts';
import { principalOf, registerAuth } from './auth.ts';
import { errorHandler, MAX_PATH_PARAM, requestIdOf } from './errors.ts';
import { registerModelGateway } from './gateway/routes.ts';
import { MAX_JSON_DEPTH, registerJsonParser } from './json.ts';
import { type McpHttpOptions, registerMcpHttp } from './mcp.ts';
import { QuietRequestLogs, registerMetrics } from './metrics.ts';
import { LiveStreams, streamEvents } from './sse.ts';
import { registerUi, webRoot } from './ui.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A one-time link that logs a browser into the web UI as the first operator (what
     * `warren serve` prints), or null when no operator key exists.
     */
    uiLoginUrl(base: string): Promise<string | null>;
  }
}

export interface HttpOptions {
  /**
   * The server's logger (pino): request lines at debug, internal errors at error, each with
   * the request id (`reqId`) its error response carries. Without one, errors go to stderr.
   */
  logger?: FastifyBaseLogger;
  /** `GET /metrics` answers without credentials (only ever set for a loopback-bound server). */
  metricsPublic?: boolean;
  mcp?: McpHttpOptions;
  /** Largest request body accepted, in bytes (413 past it). */
  bodyLimit?: number;
  /** Deepest JSON nesting accepted in a body. */
  maxJsonDepth?: number;
  /** Where the built web UI is (default: dist/web, found from this module); null serves none. */
  webRoot?: string | null;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * REST over the syscall table. Every route is generated from a syscall's `http` binding
 * (plus `POST /v1/syscalls/:name` for all of them): input is params + query + body,
 * validated by the syscall's schema. No route holds logic of its own.
 */
export async function buildHttpServer(warren: Warren, opts: HttpOptions = {}): Promise<FastifyInstance> {
  const bodyLimit = opts.bodyLimit ?? DEFAULT_BODY_LIMIT;
  // Internal failures are always recorded somewhere: the server's logger if any, else stderr.
  const log: ErrorLog = opts.logger ? { error: (obj, msg) => app.log.error(obj, msg) } : stderrLog;
  const onError = errorHandler(bodyLimit, log);
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger, logController: new QuietRequestLogs() } : {}),
    bodyLimit,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: MAX_PATH_PARAM },
    // The router's own refusals (a bad or over-long path parameter) leave typed, like the rest.
    frameworkErrors: (error, req, reply) => {
      onError(error, req, reply);
    },
  }) as unknown as FastifyInstance;
  app.setErrorHandler(onError);
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({
      error: {
        code: 'not_found',
        message: `no route ${req.method} ${req.url.slice(0, 200)}`,
        requestId: req.id,
      },
    }),
  );
  // Callback hooks, not async ones: no promise per request for a header.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    done(null, payload);
  });
  registerAuth(app, warren);
  registerJsonParser(app, opts.maxJsonDepth ?? MAX_JSON_DEPTH);
  registerMetrics(app, warren, opts.metricsPublic === true);
  registerUi(app, warren, opts.webRoot === undefined ? webRoot() : opts.webRoot);
  app.decorate('uiLoginUrl', async (base: string) => {
    const token = await warren.browser.loginToken();
    return token ? `${base}/login#token=${token}` : null;
  });

  const invoke = (syscall: Syscall, req: FastifyRequest, reply: FastifyReply, input: unknown) => {
    const traceparent = req.headers.traceparent;
    return warren.call(principalOf(req), syscall.name, input, {
      signal: abortedOnClose(reply),
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    });
  };

  // A live stream never ends by itself: close() would wait for it forever. End them first.
  const liveStreams = new LiveStreams();
  // And a keep-alive connection whose request was still running when the close began goes idle
  // later, while the close waits for every connection: a browser's next request would find it
  // open a second on (refused, and kept alive again by whatever else was in flight). Idle ones
  // are closed as they appear until the close is done.
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    liveStreams.closeAll();
    sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  });
  app.addHook('onClose', async () => clearInterval(sweep));

  // Liveness: 200 while the process runs, degraded or not (restarting a node does not bring
  // its database back); the body says `{ ok: true }` or degraded and why (docs/http.md).
  app.get('/healthz', { config: { public: true } }, async () => warren.health());

  app.get('/v1/syscalls', async () => ({
    syscalls: [...warren.table.values()].map((s) => ({
      name: s.name,
      group: s.group,
      summary: s.summary,
      description: s.description ?? null,
      callers: s.callers,
      http: s.http ?? null,
      input: z.toJSONSchema(s.input, { io: 'input', unrepresentable: 'any' }),
    })),
  }));

  app.post<{ Params: { name: string } }>('/v1/syscalls/:name', async (req, reply) => {
    const syscall = warren.table.get(req.params.name);
    if (!syscall) throw missingSyscall(req.params.name, warren.plugins.absent);
    return invoke(syscall, req, reply, req.body ?? {});
  });

  app.get<{ Querystring: Record<string, string> }>('/v1/events/live', async (req, reply) => {
    const principal = principalOf(req);
    if (principal.kind !== 'operator')
      throw new WarrenError('forbidden', 'the live event stream is for operators');
    const q = req.query;
    const after = q.after !== undefined ? Number(q.after) : undefined;
    if (after !== undefined && (!Number.isSafeInteger(after) || after < 0)) {
      throw new WarrenError('invalid_input', 'after must be a non-negative integer seq');
    }
    const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    const filter = { after, type: text(q.type), session: text(q.session), stream: text(q.stream) };
    await streamEvents(warren, principal, req, reply, stripUndefined(filter), liveStreams);
  });

  for (const syscall of warren.table.values()) {
    if (!syscall.http) continue;
    app.route({
      method: syscall.http.method,
      url: syscall.http.path,
      handler: async (req, reply) => {
        const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {};
        if (req.body !== undefined && req.body !== null && body !== req.body) {
          throw new WarrenError('invalid_input', 'the body must be a JSON object');
        }
        const input: Record<string, unknown> = {
          ...(req.query as object),
          ...body,
          ...(req.params as object),
        };
        for (const [header, field] of Object.entries(syscall.http?.headers ?? {})) {
          const v = req.headers[header];
          if (typeof v === 'string') input[field] = v;
        }
        return invoke(syscall, req, reply, input);
      },
    });
  }
  // A disabled plugin's routes answer not_found, naming the plugin (the CLI calls them by route).
  for (const syscall of warren.plugins.unloaded) {
    if (!syscall.http) continue;
    app.route({
      method: syscall.http.method,
      url: syscall.http.path,
      handler: async () => {
        throw missingSyscall(syscall.name, warren.plugins.absent);
      },
    });
  }
  registerMcpHttp(app, warren, new ToolCatalog(warren, opts.mcp?.progressEveryMs), log, opts.mcp);
  registerModelGateway(app, warren, log);
  // Upgrades (a runner's WebSocket) go to the plugin that takes them; nothing else upgrades.
  const upgrades = warren.plugins.instancesInOrder().flatMap((p) => (p.upgrades ? [p.upgrades] : []));
  app.server.on('upgrade', (req, socket, head) => {
    if (!upgrades.some((u) => u.handle(req, socket, head))) socket.destroy();
  });
  app.addHook('preClose', async () => {
    for (const u of upgrades) u.close();
  });
  return app;
}

/** Aborted when the client goes away before its answer: waits and reads stop on its behalf. */
function abortedOnClose(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

const stripUndefined = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
