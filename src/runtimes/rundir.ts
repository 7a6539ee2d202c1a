import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Private files of a node's running agents (an MCP config holding a session token …) live
 * under one directory per node run prefix, so a restarted node can sweep what a crashed run
 * left behind before it starts anything.
 */
export const runDir = (run: string) => join(tmpdir(), `warren-run-${run}`);

/** A fresh private directory for one agent process. */
export function agentTempDir(run: string, label: string): string {
  const root = runDir(run);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(root, `${label}-`));
}

/** Remove whatever a previous run of this node left there. */
export function sweepRunDir(run: string): void {
  rmSync(runDir(run), { recursive: true, force: true });
}
