/**
 * The node id marks a node's agent processes so that, after a crash, a restart ends only
 * what this node left behind: stable for one server, different between servers.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { serve } from '../../src/app/server.ts';
import { deriveNodeId } from '../../src/cluster/node-id.ts';

const root = mkdtempSync(join(tmpdir(), 'warren-nodeid-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('node id', () => {
  it('is the same for the same data dir however it is named (relative, symlinked, not yet made)', () => {
    const dir = join(root, 'data');
    mkdirSync(dir);
    symlinkSync(dir, join(root, 'link'));
    const id = deriveNodeId(dir, null);
    assert.match(id, /^[0-9a-f]{12}$/);
    assert.equal(deriveNodeId(relative(process.cwd(), dir), null), id);
    assert.equal(deriveNodeId(join(root, 'link'), null), id);
    assert.equal(deriveNodeId(dir, join(dir, 'warren.db')), id, 'the default database, named');
    const fresh = join(root, 'link', 'not-yet');
    assert.equal(deriveNodeId(fresh, null), deriveNodeId(join(dir, 'not-yet'), null));
  });

  it('differs between data dirs, and between databases in one data dir', () => {
    const a = join(root, 'a');
    assert.notEqual(deriveNodeId(a, null), deriveNodeId(join(root, 'b'), null));
    assert.notEqual(deriveNodeId(a, null), deriveNodeId(a, join(root, 'other.db')));
  });

  it('PostgreSQL: the database and data dir, not the credentials; the host name too', () => {
    const dir = join(root, 'pg');
    const url = 'postgres://warren:secret@db.internal:5432/warren?schema=w1';
    const id = deriveNodeId(dir, url, 'host-1');
    assert.equal(deriveNodeId(dir, 'postgres://warren:rotated@db.internal/warren?schema=w1', 'host-1'), id);
    assert.notEqual(deriveNodeId(dir, url, 'host-2'), id, 'two machines with the same path');
    assert.notEqual(deriveNodeId(dir, url.replace('w1', 'w2'), 'host-1'), id, 'another schema');
    assert.notEqual(deriveNodeId(join(root, 'pg2'), url, 'host-1'), id);
  });

  it('serve() gives the kernel the derived id unless one is configured', async () => {
    const out = { write: () => true };
    const dataDir = join(root, 'served');
    const base = { host: '127.0.0.1', port: 0, dataDir, durability: 'process' as const, demo: false };
    const derived = await serve(base, out);
    try {
      assert.equal(derived.warren.kernel.config.nodeId, deriveNodeId(dataDir, null));
      assert.ok(derived.warren.kernel.runId.startsWith(`${deriveNodeId(dataDir, null)}.`));
    } finally {
      await derived.stop();
    }
    const named = await serve({ ...base, kernel: { nodeId: 'edge-1' } }, out);
    try {
      assert.equal(named.warren.kernel.config.nodeId, 'edge-1');
    } finally {
      await named.stop();
    }
  });
});
