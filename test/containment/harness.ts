/**
 * A real server whose agents run confined (bubblewrap), for the containment attacks. Where
 * bubblewrap cannot make a sandbox the tests skip loudly, and fail under CI.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Running, serve } from '../../src/app/server.ts';
import type { KernelConfig } from '../../src/kernel/config.ts';
import { probeBwrap } from '../../src/runtimes/process/confine.ts';
import { request } from '../helpers/http.ts';
import { skipUnless } from '../helpers/system-tools.ts';
import { until } from '../helpers/warrens.ts';

/** Why the containment tests cannot run here (null: they can). Under CI that is a failure. */
export async function bwrapMissing(): Promise<string | null> {
  return skipUnless('containment (bubblewrap)', await probeBwrap()) || null;
}

export interface Confined {
  running: Running;
  /** Work dir: the data dir is `<work>/data`, inside what agents work in. */
  work: string;
  dataDir: string;
  key: string;
  /** A fresh working directory for one agent (under work, beside the data dir). */
  workdir(name: string): string;
  spawn(body: Record<string, unknown>): Promise<string>;
  show(id: string): Promise<Record<string, unknown>>;
  outputs(id: string): Promise<string[]>;
  events(id: string): Promise<Array<{ type: string; payload: Record<string, unknown> }>>;
  /** Wait for an output line matching `re`. */
  line(id: string, re: RegExp): Promise<string>;
  close(): Promise<void>;
}

export async function confined(kernel: Partial<KernelConfig> = {}): Promise<Confined> {
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'warren-contain-')));
  const dataDir = join(work, 'data');
  const running = await serve(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      durability: 'process',
      demo: false,
      kernel: { containment: 'bwrap', maxWaitMs: 300, ...kernel },
      logLevel: 'silent',
    },
    { write: () => {} },
  );
  const key = readFileSync(join(dataDir, 'operator.key'), 'utf8').trim();
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await request(running.url, method, path, body, { auth: key });
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  };
  const outputs = async (id: string) => {
    const r = await api('GET', `/v1/sessions/${id}/events?limit=500`);
    return (r.events as Array<{ type: string; payload: { text?: string } }>)
      .filter((e) => e.type === 'session.output')
      .map((e) => e.payload.text ?? '');
  };
  return {
    running,
    work,
    dataDir,
    key,
    workdir(name) {
      const d = join(work, name);
      mkdirSync(d, { recursive: true });
      return d;
    },
    async spawn(body) {
      const r = await api('POST', '/v1/sessions', body);
      return r.session.id as string;
    },
    async show(id) {
      return (await api('GET', `/v1/sessions/${id}`)).session;
    },
    outputs,
    async events(id) {
      return (await api('GET', `/v1/sessions/${id}/events?limit=500`)).events;
    },
    async line(id, re) {
      return until(async () => (await outputs(id)).find((l) => re.test(l)), 20_000, `output ${re}`);
    },
    async close() {
      await running.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Host pids whose command line contains `needle` (what the test, not the agent, sees). */
export function hostPids(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(needle)) out.push(pid);
    } catch {}
  }
  return out;
}

export const alive = (pid: number) => existsSync(`/proc/${pid}`);
