/**
 * A warren populated at scale for the graph, timeline and reconnect tests, their screenshots and
 * the UI bench (`test/ui/scene.ts` is the small, varied one of the console tests): tasks whose sessions
 * spawn children and grandchildren (script agents, three deep), top-level listeners, and
 * rooms with members — `sessions` live sessions in all.
 */
import type { ServerProcess } from '../helpers/server.ts';
import { LISTENER } from './browser.ts';

/** A task's session: three children, each with two children of its own, all listening. */
const CHILD = {
  steps: [
    { spawn: { title: 'leaf', script: LISTENER } },
    { spawn: { title: 'leaf', script: LISTENER } },
    ...LISTENER.steps,
  ],
};
const LEAD = {
  steps: [
    { spawn: { title: 'worker', script: CHILD } },
    { spawn: { title: 'worker', script: CHILD } },
    { spawn: { title: 'worker', script: CHILD } },
    // Stays running (a task's session that answers completes its task, and its children are
    // reparented): it waits for an input that never comes.
    { wait: { match: '^never$' } },
  ],
};
export const TREE_SIZE = 10;

/** A wide tree of 50: a lead, 7 workers, 6 leaves each (a task's spawn script). */
const WORKER7 = {
  steps: [
    ...Array.from({ length: 6 }, () => ({ spawn: { title: 'leaf', script: LISTENER } })),
    ...LISTENER.steps,
  ],
};
export const TREE_50 = {
  steps: [
    ...Array.from({ length: 7 }, (_, i) => ({ spawn: { title: `worker ${i}`, script: WORKER7 } })),
    { wait: { match: '^never$' } },
  ],
};

export interface Scene {
  /** Every live session's id (the task trees' too), and each task's id. */
  sessions: { id: string; title: string }[];
  rooms: { id: string; name: string }[];
  tasks: string[];
}

export async function populate(
  server: ServerProcess,
  opts: { sessions: number; rooms: number; taskTrees: number },
): Promise<Scene> {
  const api = server.api;
  await api('POST', '/v1/zone/limits', { maxDepth: 10, maxChildren: 1000, maxSessionsPerZone: 5000 });
  const tasks: string[] = [];
  for (let i = 0; i < opts.taskTrees; i++) {
    const r = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
      title: `feature ${i}`,
      prompt: `build feature ${i}`,
      spawn: { script: LEAD },
    });
    if (r.status !== 200) throw new Error(`task ${i}: ${r.status} ${JSON.stringify(r.json)}`);
    tasks.push(r.json.task.id);
  }
  const tops = opts.sessions - opts.taskTrees * TREE_SIZE;
  for (let i = 0; i < tops; i++) {
    const r = await api('POST', '/v1/sessions', {
      title: `agent ${String(i).padStart(3, '0')}`,
      script: LISTENER,
    });
    if (r.status !== 200) throw new Error(`spawn ${i}: ${r.status} ${JSON.stringify(r.json)}`);
  }
  const live = await waitForSessions(server, opts.sessions);
  const rooms: Scene['rooms'] = [];
  for (let i = 0; i < opts.rooms; i++) {
    const name = `room-${String(i).padStart(3, '0')}`;
    const r = await api<{ stream: { id: string } }>('POST', '/v1/streams', { name });
    rooms.push({ id: r.json.stream.id, name });
    for (let k = 0; k < 3; k++) {
      const s = live[(3 * i + k) % live.length];
      if (s) await api('POST', `/v1/streams/${r.json.stream.id}/attach`, { session: s.id });
    }
  }
  return { sessions: live, rooms, tasks };
}

export async function waitForSessions(
  server: ServerProcess,
  n: number,
): Promise<{ id: string; title: string }[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const all: { id: string; title: string | null; status: string }[] = [];
    for (let after = ''; ; ) {
      const r = await server.api<{ sessions: typeof all; next: string | null }>(
        'GET',
        `/v1/sessions?limit=1000${after ? `&after=${after}` : ''}`,
      );
      all.push(...r.json.sessions);
      if (!r.json.next) break;
      after = r.json.next;
    }
    const live = all.filter((s) => s.id !== 'init' && s.status !== 'stopped');
    if (live.length >= n) return live.map((s) => ({ id: s.id, title: s.title ?? s.id }));
    if (Date.now() > deadline) {
      const titles = new Map<string, number>();
      for (const s of live) titles.set(s.title ?? '', (titles.get(s.title ?? '') ?? 0) + 1);
      throw new Error(
        `only ${live.length} of ${n} sessions came up: ${JSON.stringify([...titles].filter(([t]) => !t.startsWith('agent')))}`,
      );
    }
    await new Promise((res) => setTimeout(res, 250));
  }
}
