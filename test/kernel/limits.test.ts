import assert from 'node:assert/strict';
import { it } from 'node:test';
import { asSession, call, deepTrees, forEachWarren, idleScript } from '../helpers/warrens.ts';

forEachWarren('spawn limits', (t) => {
  it('enforces max depth with a typed error', async () => {
    const w = await t.open({
      kernel: { limits: { maxDepth: 2, maxChildren: 10, maxSessionsPerZone: 50 } },
      gating: deepTrees,
    });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript }, asSession(a.session.id, 1));
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript }, asSession(b.session.id, 2)),
      (e: Error & { code: string; details: { limit: string } }) => {
        assert.equal(e.code, 'limit_exceeded');
        assert.equal(e.details.limit, 'maxDepth');
        return true;
      },
    );
  });

  it('enforces children per parent', async () => {
    const w = await t.open({ kernel: { limits: { maxDepth: 10, maxChildren: 2, maxSessionsPerZone: 50 } } });
    const lead = await call(w, 'ipc_spawn', { script: idleScript });
    const as = asSession(lead.session.id, 1);
    await call(w, 'ipc_spawn', { script: idleScript }, as);
    await call(w, 'ipc_spawn', { script: idleScript }, as);
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript }, as),
      (e: Error & { code: string; details: { limit: string } }) => {
        assert.equal(e.code, 'limit_exceeded');
        assert.equal(e.details.limit, 'maxChildren');
        return true;
      },
    );
  });

  it("bounds init's children (operators' sessions) by the zone's limit, not the per-parent one", async () => {
    const w = await t.open({ kernel: { limits: { maxDepth: 10, maxChildren: 2, maxSessionsPerZone: 4 } } });
    for (let i = 0; i < 4; i++) await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript }),
      (e: Error & { code: string; details: { limit: string } }) => {
        assert.equal(e.details.limit, 'maxSessionsPerZone');
        return true;
      },
    );
  });

  it('checks the zone limit atomically: concurrent spawns never overshoot', async () => {
    const w = await t.open({ kernel: { limits: { maxDepth: 10, maxChildren: 100, maxSessionsPerZone: 5 } } });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => call(w, 'ipc_spawn', { script: idleScript })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    assert.equal(ok.length, 5);
    assert.equal(refused.length, 15);
    for (const r of refused) assert.equal(r.reason.code, 'limit_exceeded');
    const live = (await call(w, 'ps')).sessions.filter((s: { depth: number }) => s.depth > 0);
    assert.equal(live.length, 5);
  });

  it('stopped sessions free their slot', async () => {
    const w = await t.open({ kernel: { limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 1 } } });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'ipc_spawn', { script: idleScript }), { code: 'limit_exceeded' });
    await call(w, 'kill', { id: a.session.id });
    await call(w, 'ipc_spawn', { script: idleScript });
  });
});
