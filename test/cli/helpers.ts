import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalCommand, runCli } from '../../src/surfaces/cli/main.ts';
import type { CliIO } from '../../src/surfaces/cli/types.ts';

/** Runs the CLI with buffers for stdout and stderr; the environment is only what the test passes. */
export async function cli(
  argv: string[],
  opts: { env?: Record<string, string>; cwd?: string; columns?: number; locals?: LocalCommand[] } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: {
      write: (s: string) => {
        stdout += s;
      },
      ...(opts.columns ? { columns: opts.columns, isTTY: true } : {}),
    },
    stderr: {
      write: (s: string) => {
        stderr += s;
      },
    },
    env: opts.env ?? {},
    cwd: opts.cwd ?? tempDir(),
  };
  const code = await runCli(argv, io, opts.locals ?? []);
  return { code, stdout, stderr };
}

const made: string[] = [];
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-cli-'));
  made.push(dir);
  return dir;
};

export interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  body: unknown;
}

/** A real HTTP server on 127.0.0.1:0 that records each request and answers with `reply`. */
export async function fakeServer(reply: (req: Recorded) => Reply) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const recorded: Recorded = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      const r = reply(recorded);
      const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      res.writeHead(r.status, {
        'content-type': typeof r.body === 'string' ? 'text/plain' : 'application/json',
      });
      res.end(text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
