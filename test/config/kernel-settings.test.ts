/**
 * The two settings the kernel reads at spawn beyond its zone limits: a default TTL for
 * sessions spawned without one, and live sessions per runtime (seed 003's "per application").
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren, idleScript } from '../helpers/warrens.ts';

const limits = { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 50 };

forEachWarren('configured kernel settings at spawn', (t) => {
  it('defaultTtlSeconds: a spawn without a TTL gets it; one with a TTL keeps its own', async () => {
    const w = await t.open({ kernel: { defaultTtlSeconds: 3600 } });
    const expiresAt = async (id: string) =>
      Number(
        (
          await w.store.reader
            .selectFrom('sessions')
            .select('expires_at')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).expires_at,
      );
    const plain = await call(w, 'ipc_spawn', { script: idleScript });
    const own = await call(w, 'ipc_spawn', { script: idleScript, ttlSeconds: 60 });
    assert.equal(await expiresAt(plain.session.id), plain.session.createdAt + 3_600_000);
    assert.equal(await expiresAt(own.session.id), own.session.createdAt + 60_000);
  });

  it('maxSessionsPerRuntime: a typed refusal past the runtime limit; a stopped one frees its slot', async () => {
    const w = await t.open({ kernel: { limits: { ...limits, maxSessionsPerRuntime: { script: 2 } } } });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript }),
      (e: Error & { code: string; details: { limit: string; runtime: string; max: number } }) => {
        assert.equal(e.code, 'limit_exceeded');
        assert.deepEqual(e.details, { limit: 'maxSessionsPerRuntime', runtime: 'script', max: 2 });
        assert.match(e.message, /2 live script sessions; the limit is 2/);
        return true;
      },
    );
    await call(w, 'kill', { id: a.session.id });
    await call(w, 'ipc_spawn', { script: idleScript });
  });
});
