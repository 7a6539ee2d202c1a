import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { forEachWarren } from '../helpers/warrens.ts';
import { type Issuer, startIssuer } from './jwks.ts';

const SCOPE = 'agent:lifecycle';

forEachWarren(
  'coordinator bearer JWTs',
  (target) => {
    const issuers: Issuer[] = [];
    after(async () => {
      for (const i of issuers.splice(0)) await i.close();
    });
    const setup = async (cacheMax = 256) => {
      const iss = await startIssuer();
      issuers.push(iss);
      await iss.addKey('k1');
      const h = await startHttp(target, {
        jwt: { issuer: iss.url, scope: SCOPE, zoneClaim: 'zone_id', cacheMax, refetchCooldownMs: 0 },
      });
      return { iss, h };
    };

    describe('verification', () => {
      it('accepts a good token in its zone and refuses wrong zone, audience, expiry, scope and other syscalls', async () => {
        const { iss, h } = await setup();
        const good = await iss.token({ scope: `openid ${SCOPE}`, zone_id: 'default' });
        const ok = await h.api('POST', '/zones/default/agents', { application_id: 'app' }, { auth: good });
        assert.equal(ok.status, 200, JSON.stringify(ok.json));
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: good })).status, 200);

        const wrongZone = await h.api('GET', '/zones/other/agents', undefined, { auth: good });
        assert.equal(wrongZone.status, 403);
        const otherZone = await iss.token({ scope: SCOPE, zone_id: 'other' });
        assert.equal(
          (await h.api('GET', '/zones/default/agents', undefined, { auth: otherZone })).status,
          403,
        );

        const wrongAud = await iss.token({ scope: SCOPE, zone_id: 'default' }, { aud: 'https://elsewhere' });
        const r1 = await h.api('GET', '/zones/default/agents', undefined, { auth: wrongAud });
        assert.equal(r1.status, 401);
        assert.equal(r1.json.error.code, 'unauthenticated');
        const expired = await iss.token({ scope: SCOPE, zone_id: 'default' }, { expiresIn: '-10s' });
        const r2 = await h.api('GET', '/zones/default/agents', undefined, { auth: expired });
        assert.equal(r2.status, 401);
        assert.match(r2.json.error.message, /expired/);
        const noScope = await iss.token({ scope: 'openid', zone_id: 'default' });
        const r3 = await h.api('GET', '/zones/default/agents', undefined, { auth: noScope });
        assert.equal(r3.status, 403);
        const noZone = await iss.token({ scope: SCOPE });
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: noZone })).status, 403);
        const tampered = `${good.slice(0, -4)}AAAA`;
        assert.equal(
          (await h.api('GET', '/zones/default/agents', undefined, { auth: tampered })).status,
          401,
        );
        // A JWT reaches the coordinator's API only.
        assert.equal((await h.api('GET', '/v1/sessions', undefined, { auth: good })).status, 403);
        // Operator keys keep working (the default credential of h.api).
        assert.equal((await h.api('GET', '/zones/other/agents')).status, 200);
        // And so do agents' own session tokens (three dot-separated parts, like a JWT): an
        // agent reads its own session and its coordinator record.
        const agent = ok.json.agent.id as string;
        const mine = h.tokenOf(agent);
        const self = await h.api('GET', `/v1/sessions/${agent}`, undefined, { auth: mine });
        assert.equal(self.status, 200, JSON.stringify(self.json));
        assert.equal(
          (await h.api('GET', `/zones/default/agents/${agent}`, undefined, { auth: mine })).status,
          200,
        );
      });

      it('refreshes the JWKS on an unknown kid and keeps at most cacheMax keys', async () => {
        const { iss, h } = await setup(2);
        const t1 = await iss.token({ scope: SCOPE, zone_id: 'default' });
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: t1 })).status, 200);
        const before = iss.fetches;
        // Cached: no fetch for a known kid.
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: t1 })).status, 200);
        assert.equal(iss.fetches, before);
        for (const kid of ['k2', 'k3', 'k4']) await iss.addKey(kid);
        const t4 = await iss.token({ scope: SCOPE, zone_id: 'default' }, { kid: 'k4' });
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: t4 })).status, 200);
        assert.equal(iss.fetches, before + 1);
        assert.ok((h.warren.jwt?.cached ?? 0) <= 2);
        // A key evicted by the bound is fetched again when a token names it.
        const t2 = await iss.token({ scope: SCOPE, zone_id: 'default' }, { kid: 'k2' });
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: t2 })).status, 200);
        assert.ok((h.warren.jwt?.cached ?? 0) <= 2);
        // A kid the issuer does not publish is refused.
        const other = await startIssuer();
        issuers.push(other);
        await other.addKey('k9');
        const forged = await other.token(
          { scope: SCOPE, zone_id: 'default' },
          { kid: 'k9', iss: iss.url, aud: iss.url },
        );
        assert.equal((await h.api('GET', '/zones/default/agents', undefined, { auth: forged })).status, 401);
      });
    });
  },
  ['sqlite'],
);
