/**
 * Network per grant (issue 25): on a node whose default is full network, a spawn granted
 * `network: none` gets a confined agent that cannot connect to a TCP listener on the host's
 * 127.0.0.1 (it still reaches warren through its bound socket), one granted `full` can; a child
 * of a `none` session inherits none, and one that asks for full is refused.
 */
import assert from 'node:assert/strict';
import { realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { until } from '../helpers/warrens.ts';
import { bwrapMissing, type Confined, confined } from './harness.ts';

const skip = await bwrapMissing();

/** Connects to AGENT_PORT, calls warren, and (with SPAWN) spawns itself twice: asking for full, and not asking. */
const AGENT = `
import net from 'node:net';
const say = (s) => process.stdout.write(s + '\\n');
const tcp = await new Promise((resolve) => {
  const s = net.connect(Number(process.env.AGENT_PORT), '127.0.0.1');
  s.on('connect', () => { s.destroy(); resolve('connected'); });
  s.on('error', (e) => resolve('error ' + (e.code ?? e.message)));
  setTimeout(() => { s.destroy(); resolve('timeout'); }, 5000);
});
say('TCP ' + tcp);
const call = (path, body) => fetch(process.env.WARREN_URL + path, {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.WARREN_TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify(body),
}).then(async (r) => ({ status: r.status, json: await r.json() }), (e) => ({ status: 0, json: { error: { code: e.message } } }));
say('WARREN ' + (await call('/v1/syscalls/ipc_list_fds', {})).status);
if (process.env.SPAWN) {
  const child = { runtime: 'command', command: [process.execPath, process.argv[1]], env: { AGENT_PORT: process.env.AGENT_PORT } };
  const full = await call('/v1/sessions', { ...child, grants: { network: 'full' } });
  say('FULL ' + full.status + ' ' + (full.json.error?.code ?? '') + ' ' + (full.json.error?.details?.grant ?? ''));
  const plain = await call('/v1/sessions', child);
  say('CHILD ' + plain.status + ' ' + (plain.json.session?.id ?? JSON.stringify(plain.json)));
}
say('done');
`;

describe('network per grant', { skip: skip ?? false }, () => {
  let w: Confined;
  let listener: Server;
  let port: number;
  let accepted = 0;
  before(async () => {
    w = await confined({ containmentNetwork: 'full' });
    listener = createServer((c) => {
      accepted++;
      c.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
    port = (listener.address() as { port: number }).port;
  });
  after(async () => {
    listener?.close();
    await w?.close();
  });

  const run = async (name: string, body: Record<string, unknown>) => {
    const cwd = w.workdir(name);
    const file = join(cwd, 'agent.mjs');
    writeFileSync(file, AGENT);
    const id = await w.spawn({
      runtime: 'command',
      command: [process.execPath, file],
      cwd,
      env: { AGENT_PORT: String(port) },
      ...body,
    });
    await w.line(id, /^done$/);
    return { id, out: await w.outputs(id) };
  };
  const line = (out: string[], prefix: string) => out.find((l) => l.startsWith(`${prefix} `)) ?? '';

  it('network none: no connection to a listener on the host loopback; warren still answers', async () => {
    const before = accepted;
    const { id, out } = await run('none', { grants: { network: 'none' } });
    assert.match(line(out, 'TCP'), /^TCP error ECONNREFUSED$/, out.join(' | '));
    assert.equal(line(out, 'WARREN'), 'WARREN 200', out.join(' | '));
    assert.equal(accepted, before, 'the listener was never reached');
    assert.deepEqual((await w.show(id)).containment, { mode: 'bwrap', network: 'none' });
    const spawned = (await w.events(id)).find((e) => e.type === 'session.spawned');
    assert.deepEqual(spawned?.payload.containment, { mode: 'bwrap', network: 'none' });
  });

  it('network full: the same agent connects', async () => {
    const before = accepted;
    const { id, out } = await run('full', { grants: { network: 'full' } });
    assert.equal(line(out, 'TCP'), 'TCP connected', out.join(' | '));
    await until(() => accepted > before, 5000, 'the listener saw the connection');
    assert.deepEqual((await w.show(id)).containment, { mode: 'bwrap', network: 'full' });
  });

  it('a child of a network-none session asking for full is refused; not asking, it gets none', async () => {
    const before = accepted;
    const { out } = await run('parent', {
      env: { AGENT_PORT: String(port), SPAWN: '1' },
      grants: {
        network: 'none',
        runtimes: ['command', 'script'],
        executables: [realpathSync(process.execPath)],
      },
    });
    assert.equal(line(out, 'FULL'), 'FULL 403 forbidden network', out.join(' | '));
    const child = /^CHILD 200 (\S+)$/.exec(line(out, 'CHILD'))?.[1];
    assert.ok(child, out.join(' | '));
    await w.line(child, /^done$/);
    const childOut = await w.outputs(child);
    assert.equal(line(childOut, 'TCP'), 'TCP error ECONNREFUSED', childOut.join(' | '));
    assert.deepEqual((await w.show(child)).containment, { mode: 'bwrap', network: 'none' });
    assert.equal(accepted, before, 'neither reached the listener');
  });
});
