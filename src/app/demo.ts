import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Warren } from '../syscalls/warren.ts';
import { packageRoot } from '../util/package-root.ts';
import { operator } from '../vocab/principal.ts';

export const DEMO_SCRIPT = join(packageRoot(import.meta.url), 'examples', 'demo.yaml');

interface Spawned {
  session: { id: string };
}

/**
 * The bundled demo, driven through the syscall table like any client: an operator room,
 * a lead agent that spawns two workers and talks to them, and a message from outside.
 */
export async function runDemo(warren: Warren, log: (line: string) => void): Promise<{ lead: string }> {
  const op = operator();
  const lobbyName = `lobby-${Date.now().toString(36)}`;
  const lobby = (await warren.call(op, 'streams_create', { name: lobbyName, selfEcho: true })) as {
    fd: number;
  };
  log(`demo: operator room ${lobbyName} created (operator fd ${lobby.fd})`);
  const lead = (await warren.call(op, 'ipc_spawn', {
    title: 'lead',
    prompt: 'coordinate two workers',
    runtime: 'script',
    script: readFileSync(DEMO_SCRIPT, 'utf8'),
    pipe: 'async',
  })) as Spawned;
  log(`demo: spawned lead ${lead.session.id}`);
  await warren.call(op, 'streams_attach', {
    session: lead.session.id,
    stream: lobbyName,
    permission: 'rw',
    mode: 'async',
  });
  log(`demo: attached lead to ${lobbyName}`);
  await settle(warren, lead.session.id);
  await warren.call(op, 'ipc_write', { fd: lobby.fd, message: 'operator: standup in five minutes' });
  log(`demo: operator posted to ${lobbyName}`);
  await settle(warren, lead.session.id);
  return { lead: lead.session.id };
}

/** Wait (bounded) until the lead is idle again. */
async function settle(warren: Warren, id: string, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  const op = operator();
  while (Date.now() < until) {
    const { session } = (await warren.call(op, 'session_show', { id })) as { session: { status: string } };
    if (session.status === 'idle' || session.status === 'stopped') return;
    await new Promise((r) => setTimeout(r, 25));
  }
}
