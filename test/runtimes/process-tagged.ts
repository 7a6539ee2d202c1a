import { readdirSync, readFileSync } from 'node:fs';

/**
 * Live processes whose environment holds `TAG=<value>`: a test tags the agents it starts
 * itself, so what it counts does not depend on the code under test.
 */
export function tagged(value: string, name = 'TEST_TAG'): number[] {
  const needle = `\0${name}=${value}\0`;
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      // A zombie's environment reads empty: only the living count.
      if (`\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(needle)) out.push(pid);
    } catch {}
  }
  return out;
}

/** Poll until `fn` is true or `ms` pass; returns whether it became true. */
export async function eventually(fn: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (fn()) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGKILL each pid, ignoring the gone. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
