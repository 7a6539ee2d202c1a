/**
 * What a test file of real `codex` agents sets up once and cleans up after its tests, even
 * when one fails: a mock Responses API (its script and records reset after each test), a root
 * for the sessions' CODEX_HOMEs, and every codex process whose environment points into it
 * (killed), the root removed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach } from 'node:test';
import { type MockOpenAI, startMockOpenAI } from './mock-openai.ts';

export interface CodexAgents {
  /** The file's mock. */
  mock: MockOpenAI;
  /** Every CODEX_HOME the runtime makes goes under here: what is left in it after a test leaked. */
  homeRoot: string;
  /** Processes whose environment points into `homeRoot`: codex turns still running. */
  pids(): number[];
}

export async function codexAgents(prefix: string): Promise<CodexAgents> {
  const mock = await startMockOpenAI();
  const homeRoot = mkdtempSync(join(tmpdir(), prefix));
  const pids = () => {
    const found: number[] = [];
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        if (readFileSync(`/proc/${d}/environ`, 'utf8').includes(`CODEX_HOME=${homeRoot}`))
          found.push(Number(d));
      } catch {}
    }
    return found;
  };
  after(async () => {
    for (const pid of pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await mock.close();
    rmSync(homeRoot, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  afterEach(() => {
    mock.requests.length = 0;
    mock.unknown.length = 0;
    mock.script = () => 'ok';
  });
  return { mock, homeRoot, pids };
}
