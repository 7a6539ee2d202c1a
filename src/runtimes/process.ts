import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { invalid, WarrenError } from '../kernel/errors.ts';
import type { AgentSpec } from './types.ts';

/** Where an executable would be found, or null. */
export function resolveExecutable(cmd: string, path = process.env.PATH ?? ''): string | null {
  const candidates =
    isAbsolute(cmd) || cmd.includes('/') ? [cmd] : path.split(delimiter).map((d) => join(d, cmd));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {}
  }
  return null;
}

export function requireExecutable(cmd: string, runtime: string): string {
  const found = resolveExecutable(cmd);
  if (!found) {
    throw new WarrenError(
      'runtime_unavailable',
      `${runtime}: executable ${JSON.stringify(cmd)} was not found on PATH`,
      {
        runtime,
        missing: cmd,
      },
    );
  }
  return found;
}

/** The last bytes of a stream: what a crash report shows. */
export class Tail {
  private buf = '';
  constructor(private readonly max = 4096) {}
  push(chunk: string): void {
    this.buf = (this.buf + chunk).slice(-this.max);
  }
  toString(): string {
    return this.buf;
  }
}

/**
 * An agent process in its own process group, so that stopping it stops everything it
 * started. Stop is SIGTERM to the group, then SIGKILL after a short grace.
 */
export function spawnGroup(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv },
): ChildProcess {
  return spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
}

export async function killGroup(child: ChildProcess, graceMs = 1000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  signalGroup(child.pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  // Grandchildren that ignored SIGTERM must not outlive the session either.
  signalGroup(child.pid, 'SIGKILL');
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {}
}

/** Split a byte stream into lines. */
export function onLines(stream: NodeJS.ReadableStream, fn: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    let i = rest.indexOf('\n');
    while (i >= 0) {
      const line = rest.slice(0, i).replace(/\r$/, '');
      rest = rest.slice(i + 1);
      fn(line);
      i = rest.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (rest) fn(rest);
    rest = '';
  });
}

/** The command line of a process runtime: `config.command` (a string or an array) plus `config.args`. */
export function commandLine(spec: AgentSpec, runtime: string): [string, ...string[]] {
  const c = spec.config.command;
  const args = Array.isArray(spec.config.args) ? spec.config.args.map(String) : [];
  if (Array.isArray(c) && c.length > 0) return [String(c[0]), ...c.slice(1).map(String), ...args];
  if (typeof c === 'string' && c.trim().length > 0) {
    const [cmd, ...rest] = splitCommandLine(c);
    return [cmd!, ...rest, ...args];
  }
  throw invalid(`the ${runtime} runtime needs config.command (a command line or an array)`);
}

/** Split a command line on whitespace, honouring '…' and "…" quoting and backslash escapes. No shell is involved. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: '"' | "'" | null = null;
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else cur += ch;
  }
  if (quote) throw invalid(`unterminated ${quote} in command line`);
  if (has || cur) out.push(cur);
  return out;
}
