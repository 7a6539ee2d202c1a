import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';

/**
 * Issue 25's attack: group agents were started inside the data dir (`<data-dir>/groups/main`),
 * so `cat ../../operator.key` worked there. They now work outside it; a folder from before
 * moves over when its group's agent next starts afresh.
 */

const scratch = mkdtempSync(join(tmpdir(), 'warren-gwd-'));
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.allSettled(servers.map((s) => s.crash()));
  rmSync(scratch, { recursive: true, force: true });
});

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a group agent works outside the data dir: ../../operator.key is not there; old folders move over', async () => {
  const dataDir = join(scratch, 'data');
  const out = join(scratch, 'out');
  mkdirSync(out);
  // A folder from before: it must follow the group.
  mkdirSync(join(dataDir, 'groups', 'main'), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, 'groups', 'main', 'notes.txt'), 'kept');
  const s = await startServer({ dataDir });
  servers.push(s);
  const script = [
    `pwd -P > ${out}/pwd.tmp && mv ${out}/pwd.tmp ${out}/pwd`,
    `cat ../../operator.key > ${out}/key 2>/dev/null`,
    // Written aside, then renamed: the test reads it as soon as it exists.
    `cat notes.txt > ${out}/notes.tmp 2>/dev/null; mv ${out}/notes.tmp ${out}/notes`,
    `echo '{"warren":"idle"}'`,
    'exec sleep 300',
  ].join('; ');
  const reg = await s.api('POST', '/v1/groups', {
    folder: 'main',
    agent: { runtime: 'command', command: ['/bin/sh', '-c', script] },
  });
  assert.equal(reg.status, 200, JSON.stringify(reg.json));
  const inj = await s.api('POST', '/v1/groups/inject', { target: 'main', text: 'hello' });
  assert.equal(inj.status, 200, JSON.stringify(inj.json));
  await until('the group agent to report where it works', () => existsSync(join(out, 'pwd')));
  const cwd = readFileSync(join(out, 'pwd'), 'utf8').trim();
  const data = realpathSync(dataDir);
  assert.equal(cwd, join(`${data}-groups`, 'main'));
  assert.ok(!cwd.startsWith(`${data}/`), `${cwd} is inside the data dir`);
  await until('the agent to try the key', () => existsSync(join(out, 'notes')));
  assert.ok(!readFileSync(join(out, 'key'), 'utf8').includes(s.key), 'the agent read operator.key');
  assert.equal(readFileSync(join(out, 'notes'), 'utf8'), 'kept', 'the old folder moved with its files');
  assert.ok(!existsSync(join(dataDir, 'groups', 'main')), 'the old folder is gone from the data dir');
  await s.stop();
});
