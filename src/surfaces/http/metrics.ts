import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Warren } from '../../syscalls/warren.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { principalOf } from './auth.ts';

/**
 * `GET /metrics` (Prometheus text) and the count of HTTP requests by route and status.
 * The scrape needs an operator credential unless the server was started with
 * `metrics.public` on a loopback address (see docs/observability.md).
 */
export function registerMetrics(app: FastifyInstance, warren: Warren, isPublic: boolean): void {
  const metrics = warren.metrics;
  if (!metrics) {
    app.get('/metrics', async () => {
      throw new WarrenError('not_found', 'metrics are off on this server (metrics.enabled: false)');
    });
    return;
  }
  app.addHook('onResponse', (req, reply, done) => {
    // The route's pattern, not its URL: ids in paths must not become label values.
    metrics.httpRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode);
    done();
  });
  app.get('/metrics', { config: { public: isPublic } }, async (req, reply) => {
    if (!isPublic && principalOf(req).kind !== 'operator') {
      throw new WarrenError('forbidden', 'metrics are for operators');
    }
    const { text, contentType } = await metrics.scrape();
    return reply.type(contentType).send(text);
  });
}

/**
 * Fastify's request lines at debug instead of info: a busy server (every agent's MCP call is
 * a request) would otherwise write two lines per call at the default level. Failures keep
 * their levels.
 */
export class QuietRequestLogs extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    _req: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error)
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
