/**
 * What a test file of real `claude` agents sets up once and cleans up after its tests, even
 * when one fails: a temp root for the agents' homes and working directories, the agents'
 * process groups (killed), and the mocks and servers it started (closed).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { HttpWarren } from './http.ts';
import { eventsOf, until } from './warrens.ts';

export interface ClaudeAgents {
  root: string;
  /** Agent pids (each leads its process group): killed by group after the file's tests. */
  pids: Set<number>;
  /** Closed after the file's tests. */
  closers: Array<() => Promise<void>>;
  /** A private HOME and config dir for one agent (nothing touches ~/.claude), and a working directory. */
  agentDirs(): { home: string; cwd: string; env: Record<string, string> };
  /** The pid of the session's CLI, once it started (from its `claude_started` event); killed after. */
  claudePid(h: HttpWarren, id: string): Promise<number>;
}

export function claudeAgents(prefix: string): ClaudeAgents {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const pids = new Set<number>();
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const pid of pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {}
    }
    await Promise.allSettled(closers.splice(0).map((c) => c()));
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  return {
    root,
    pids,
    closers,
    agentDirs() {
      const base = mkdtempSync(join(root, 'agent-'));
      const home = join(base, 'home');
      const cwd = join(base, 'work');
      mkdirSync(home);
      mkdirSync(cwd);
      return { home, cwd, env: { HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') } };
    },
    async claudePid(h, id) {
      const started = await until(
        async () => (await eventsOf(h, id)).find((e) => e.type === 'session.claude_started'),
        15_000,
        'claude to start',
      );
      const pid = started.payload.pid as number;
      pids.add(pid);
      return pid;
    },
  };
}
