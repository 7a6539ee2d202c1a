/** A local issuer for tests: a JWKS server on 127.0.0.1:0 and tokens signed with its keys. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type Signer = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export interface Issuer {
  url: string;
  /** Publish a new key (its kid) and return it. */
  addKey(kid: string): Promise<string>;
  /** Times the JWKS was fetched. */
  fetches: number;
  token(
    claims: Record<string, unknown>,
    opts?: { kid?: string; expiresIn?: string; aud?: string; iss?: string },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(): Promise<Issuer> {
  const published: JWK[] = [];
  const signers = new Map<string, Signer>();
  const server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    issuer.fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer: Issuer = {
    url,
    fetches: 0,
    async addKey(kid) {
      const { publicKey, privateKey } = await generateKeyPair('RS256');
      published.push({ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' });
      signers.set(kid, privateKey);
      return kid;
    },
    async token(claims, o = {}) {
      const kid = o.kid ?? 'k1';
      const key = signers.get(kid);
      if (!key) throw new Error(`no key ${kid}`);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(o.iss ?? url)
        .setAudience(o.aud ?? url)
        .setSubject('caracal-client')
        .setIssuedAt()
        .setExpirationTime(o.expiresIn ?? '5m')
        .sign(key);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return issuer;
}
