import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Warren } from '../../syscalls/warren.ts';
import { packageRoot } from '../../util/package-root.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { principalOf, sameOrigin } from './auth.ts';
import { cookieOf, SESSION_COOKIE } from './cookie.ts';

/** The pages of the single-page app: each answers index.html, the app routes in the browser. */
const PAGES = [
  '/',
  '/login',
  '/coordination',
  '/sessions',
  '/tasks',
  '/inbox',
  '/schedules',
  '/knowledge',
  '/log',
  '/chat',
];
const PAGE_PREFIXES = ['/sessions/', '/tasks/', '/inbox/', '/schedules/', '/knowledge/'];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * The built web UI (`web/` -> `dist/web/`, built by `npm run build`), found from the package
 * root: the same answer from the sources, the tsc build and the bundled server.
 */
export function webRoot(): string | null {
  const dir = join(packageRoot(import.meta.url), 'dist', 'web');
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

/** No other site may frame the UI or load it as something else; scripts only from here. */
function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header(
      'content-security-policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
    );
}

const LoginBody = z.union([
  z.object({ key: z.string().min(1).max(512) }).strict(),
  z.object({ token: z.string().min(1).max(512) }).strict(),
]);

/**
 * The web UI on the server's own port: static files, the SPA's pages, and the browser login
 * (an operator key or a one-time login token in, an HttpOnly SameSite=Strict cookie out). The
 * cookie then stands for that operator in the one auth hook (auth.ts); nothing here reads data.
 */
export function registerUi(app: FastifyInstance, warren: Warren, root: string | null) {
  const page = async (_req: FastifyRequest, reply: FastifyReply) => {
    if (!root) {
      return secure(reply)
        .status(503)
        .type('text/html; charset=utf-8')
        .send('<!doctype html><p>The web UI is not built: run <code>npm run build</code>.</p>');
    }
    const html = await readFile(join(root, 'index.html'));
    return secure(reply)
      .header('cache-control', 'no-cache')
      .type(TYPES['.html'] as string)
      .send(html);
  };
  for (const path of PAGES) app.get(path, { config: { public: true } }, page);
  for (const prefix of PAGE_PREFIXES) app.get(`${prefix}:id`, { config: { public: true } }, page);
  for (const prefix of PAGE_PREFIXES) app.get(`${prefix}:id/timeline`, { config: { public: true } }, page);
  // Old per-stream chat links open the Coordination tab with that stream's drawer.
  app.get<{ Params: { streamId: string } }>('/chat/:streamId', { config: { public: true } }, (req, reply) =>
    reply.redirect(`/coordination?stream=${encodeURIComponent(req.params.streamId)}`),
  );

  app.get<{ Params: { '*': string } }>('/assets/*', { config: { public: true } }, async (req, reply) => {
    if (!root) throw new WarrenError('not_found', 'the web UI is not built');
    const rel = normalize(req.params['*']);
    const file = join(root, 'assets', rel);
    if (rel.startsWith('..') || rel.includes(`${sep}..`) || !file.startsWith(join(root, 'assets') + sep)) {
      throw new WarrenError('not_found', 'no such asset');
    }
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      throw new WarrenError('not_found', `no asset ${rel.slice(0, 200)}`);
    }
    // Vite names assets by content hash: a name never changes meaning.
    return secure(reply)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type(TYPES[extname(file)] ?? 'application/octet-stream')
      .send(body);
  });

  app.post('/v1/ui/login', { config: { public: true } }, async (req, reply) => {
    if (req.headers.origin !== undefined && !sameOrigin(req)) {
      throw new WarrenError('forbidden', 'cross-origin login refused');
    }
    const parsed = LoginBody.safeParse(req.body ?? {});
    if (!parsed.success)
      throw new WarrenError('invalid_input', 'send { "key": "wk_…" } or { "token": "wlt_…" }');
    const { operator, cookie, maxAgeSeconds } = await warren.browser.login(parsed.data);
    const secureFlag = req.protocol === 'https' ? '; Secure' : '';
    reply.header(
      'set-cookie',
      `${SESSION_COOKIE}=${cookie}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secureFlag}`,
    );
    return { operator };
  });

  app.post('/v1/ui/logout', async (req, reply) => {
    principalOf(req);
    await warren.browser.logout(cookieOf(req.headers.cookie, SESSION_COOKIE));
    reply.header('set-cookie', `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
    return { ok: true };
  });

  app.get('/v1/ui/me', async (req) => {
    const p = principalOf(req);
    return p.kind === 'operator'
      ? { operator: p.name, zone: p.zone }
      : { session: p.sessionId, zone: p.zone };
  });
}
