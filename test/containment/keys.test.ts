/**
 * Attacks on warren's keys by a confined `command` agent (issue 25): it is told exactly where
 * the data dir is (it lies inside its own working directory) and tries to read the
 * operator key, the token-signing secret, the secrets key and the database, by absolute path
 * and relative to its working directory; it tries to write outside its working directory. All refused; its own working
 * directory and home stay writable; the containment is recorded on the spawn and shown.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapMissing, type Confined, confined } from './harness.ts';

const skip = await bwrapMissing();

const ATTACK = `
for f in operator.key secret secrets.key warren.db; do
  if cat "$DD/$f" >/dev/null 2>&1; then echo "READ $f"; else echo "DENIED $f"; fi
done
if cat ./data/operator.key >/dev/null 2>&1; then echo "READ ./data"; else echo "DENIED ./data"; fi
echo "LS $(ls -A "$DD" 2>/dev/null | tr '\\n' ' ')"
touch /tmp/planted "$HOME/../planted" 2>/dev/null
if touch /etc/warren-planted 2>/dev/null; then echo "WROTE /etc"; else echo "DENIED /etc"; fi
if touch ./mine && touch "$HOME/.mine"; then echo "WROTE own"; else echo "DENIED own"; fi
echo done
`;

describe('a confined command agent and warren\u2019s keys', { skip: skip ?? false }, () => {
  let w: Confined;
  before(async () => {
    w = await confined();
  });
  after(async () => {
    await w?.close();
  });

  it('cannot read operator.key, secret, secrets.key or the database, nor write outside its work', async () => {
    // Its working directory holds the data dir: nothing but the sandbox stands between them.
    const cwd = w.work;
    const id = await w.spawn({
      runtime: 'command',
      command: ['/bin/sh', '-c', ATTACK],
      cwd,
      env: { DD: w.dataDir, WORK: w.work },
    });
    await w.line(id, /^done$/);
    const out = await w.outputs(id);
    for (const f of ['operator.key', 'secret', 'secrets.key', 'warren.db']) {
      assert.ok(out.includes(`DENIED ${f}`), `${f}: ${out.join(' | ')}`);
    }
    assert.ok(out.includes('DENIED ./data'), out.join(' | '));
    const ls = out.find((l) => l.startsWith('LS ')) ?? '';
    assert.doesNotMatch(ls, /operator|secret|warren\.db|mcp/, 'the data dir looks empty inside');
    // Writes outside its working directory and home land nowhere on the host.
    assert.ok(out.includes('DENIED /etc'), out.join(' | '));
    assert.equal(existsSync('/tmp/planted'), false, 'a write to the host outside its work');
    assert.equal(existsSync(join(w.dataDir, 'homes', 'planted')), false, 'a write beside its home');
    assert.equal(existsSync(join(cwd, 'mine')), true, 'its own work is the host directory');
    assert.ok(out.includes('WROTE own'), out.join(' | '));

    const shown = await w.show(id);
    assert.deepEqual(shown.containment, { mode: 'bwrap', network: 'full' });
    const spawned = (await w.events(id)).find((e) => e.type === 'session.spawned');
    assert.deepEqual(spawned?.payload.containment, { mode: 'bwrap', network: 'full' });
  });
});
