import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { authenticate, bearerOf } from '../../auth/authenticate.ts';
import { WarrenError } from '../../kernel/errors.ts';
import type { Principal } from '../../kernel/principal.ts';
import type { Syscall } from '../../syscalls/types.ts';
import type { Warren } from '../../warren.ts';
import { type McpHttpOptions, registerMcpHttp } from '../mcp/http.ts';
import { ToolCatalog } from '../mcp/server.ts';
import { errorHandler } from './errors.ts';
import { streamEvents } from './sse.ts';

export interface HttpOptions {
  logger?: boolean;
  mcp?: McpHttpOptions;
}

const ZONE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * REST over the syscall table. Every route is generated from a syscall's `http` binding
 * (plus `POST /v1/syscalls/:name` for all of them): input is params + query + body,
 * validated by the syscall's schema. No route holds logic of its own.
 */
export async function buildHttpServer(warren: Warren, opts: HttpOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: opts.logger ?? false, bodyLimit: 4 * 1024 * 1024 });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } }),
  );

  const principalOf = async (req: FastifyRequest): Promise<Principal> => {
    const zone = req.headers['x-warren-zone'];
    if (zone !== undefined && (typeof zone !== 'string' || !ZONE.test(zone))) {
      throw new WarrenError('invalid_input', 'X-Warren-Zone must be lowercase letters, digits, - or _');
    }
    return authenticate(warren, bearerOf(req.headers.authorization), zone as string | undefined);
  };

  const invoke = async (syscall: Syscall, req: FastifyRequest, reply: FastifyReply, input: unknown) => {
    const principal = await principalOf(req);
    // The client went away before the answer: stop waiting on its behalf.
    const ac = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    return warren.call(principal, syscall.name, input, { signal: ac.signal });
  };

  // A live stream never ends by itself: close() would wait for it forever. End them first.
  const liveStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const stop of [...liveStreams]) stop();
  });

  app.get('/healthz', async () => ({ ok: true }));

  app.get('/v1/syscalls', async (req) => {
    await principalOf(req);
    return {
      syscalls: [...warren.table.values()].map((s) => ({
        name: s.name,
        group: s.group,
        summary: s.summary,
        description: s.description ?? null,
        callers: s.callers,
        http: s.http ?? null,
        input: z.toJSONSchema(s.input, { io: 'input', unrepresentable: 'any' }),
      })),
    };
  });

  app.post<{ Params: { name: string } }>('/v1/syscalls/:name', async (req, reply) => {
    const syscall = warren.table.get(req.params.name);
    if (!syscall) throw new WarrenError('not_found', `no syscall ${JSON.stringify(req.params.name)}`);
    return invoke(syscall, req, reply, req.body ?? {});
  });

  app.get<{ Querystring: Record<string, string> }>('/v1/events/live', async (req, reply) => {
    const principal = await principalOf(req);
    if (principal.kind !== 'operator')
      throw new WarrenError('forbidden', 'the live event stream is for operators');
    const q = req.query;
    const after = q.after !== undefined ? Number(q.after) : undefined;
    if (after !== undefined && (!Number.isInteger(after) || after < 0)) {
      throw new WarrenError('invalid_input', 'after must be a non-negative integer seq');
    }
    await streamEvents(
      warren,
      principal,
      req,
      reply,
      {
        ...(after !== undefined ? { after } : {}),
        ...(q.type ? { type: q.type } : {}),
        ...(q.session ? { session: q.session } : {}),
        ...(q.stream ? { stream: q.stream } : {}),
      },
      liveStreams,
    );
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
        const input = { ...(req.query as object), ...body, ...(req.params as object) };
        return invoke(syscall, req, reply, input);
      },
    });
  }
  registerMcpHttp(app, warren, new ToolCatalog(warren, opts.mcp?.progressEveryMs), principalOf, opts.mcp);
  return app;
}
