/**
 * `containmentNetwork: none`: a confined agent has no network, yet reaches warren at its
 * usual WARREN_URL (through a unix socket bound into its sandbox). It calls a syscall with
 * its token (200) and fails to reach another server on the host's loopback.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapMissing, type Confined, confined } from './harness.ts';

const skip = await bwrapMissing();

const AGENT = `
const say = (s) => process.stdout.write(s + '\\n');
const warren = await fetch(process.env.WARREN_URL + '/v1/syscalls/ipc_list_fds', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.WARREN_TOKEN, 'content-type': 'application/json' },
  body: '{}',
}).then((r) => 'status ' + r.status, (e) => 'error ' + e.message);
say('WARREN ' + warren);
const other = await fetch(process.env.OTHER).then((r) => 'status ' + r.status, (e) => 'error ' + (e.cause?.code ?? e.message));
say('OTHER ' + other);
say('done');
`;

describe('a confined agent without network', { skip: skip ?? false }, () => {
  let w: Confined;
  let other: Server;
  let otherUrl: string;
  before(async () => {
    w = await confined({ containmentNetwork: 'none' });
    other = createServer((_q, r) => r.end('reached'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}/`;
  });
  after(async () => {
    other?.close();
    await w?.close();
  });

  it("reaches warren through its bound socket, and nothing else on the host's loopback", async () => {
    const cwd = w.workdir('offline');
    writeFileSync(join(cwd, 'agent.mjs'), AGENT);
    // The same agent can reach that server from the host: the sandbox is what stops it.
    assert.equal(await (await fetch(otherUrl)).text(), 'reached');
    const id = await w.spawn({
      runtime: 'command',
      command: [process.execPath, join(cwd, 'agent.mjs')],
      cwd,
      env: { OTHER: otherUrl },
    });
    await w.line(id, /^done$/);
    const out = await w.outputs(id);
    assert.ok(out.includes('WARREN status 200'), out.join(' | '));
    assert.match(out.find((l) => l.startsWith('OTHER ')) ?? '', /^OTHER error ECONNREFUSED/);
    assert.deepEqual((await w.show(id)).containment, { mode: 'bwrap', network: 'none' });
  });
});
