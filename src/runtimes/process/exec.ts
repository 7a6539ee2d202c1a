import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { invalid, WarrenError } from '../../vocab/errors.ts';
import type { AgentSpec } from '../types.ts';

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
