/**
 * Tests that need a system tool this machine lacks (chromium, tmux, socat, bubblewrap) skip
 * with one loud warning per test file, as the PostgreSQL half does, and fail under CI, where
 * .ci/run installs every one of them: a missing tool there is a broken setup, not a reason
 * to pass.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True when the run is CI's (`CI` set to anything but empty, `0` or `false`). */
export const underCi = (): boolean => !['', '0', 'false'].includes(process.env.CI ?? '');

/**
 * `false` when nothing is missing (`reason` null); else the reason, as a `skip` value, after a
 * loud warning. Under CI it throws instead, which fails the test file.
 */
export function skipUnless(what: string, reason: string | null): string | false {
  if (reason === null) return false;
  if (underCi()) throw new Error(`the ${what} tests need what CI must have: ${reason}`);
  process.stderr.write(`\n*** SKIPPING the ${what} tests: ${reason} (.ci/run installs it) ***\n\n`);
  return reason;
}

/** Null when `command` (a name on PATH, or an absolute path) is an executable; else why not. */
export function missingCommand(command: string): string | null {
  const candidates = command.includes('/')
    ? [command]
    : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, command));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return null;
    } catch {}
  }
  return `${command} is not installed`;
}

/** The skip value for tests that need `command`: see skipUnless. */
export const needs = (command: string): string | false => skipUnless(command, missingCommand(command));
