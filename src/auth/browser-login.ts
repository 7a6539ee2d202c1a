import { firstOperator, operatorHoldsKey } from '../kernel/operator-keys.ts';
import { WarrenError } from '../vocab/errors.ts';
import { DEFAULT_ZONE, type Principal } from '../vocab/principal.ts';
import { type Authority, operatorOfKey } from './authenticate.ts';
import type { BrowserSessions } from './browser-sessions.ts';

const unauthenticated = (message: string) => new WarrenError('unauthenticated', message);

/**
 * How a browser is authenticated, in one place: an operator key or a one-time login token in,
 * a cookie session out (login); a cookie back in, the operator principal its key gives, while
 * that operator still holds a live key. The key is checked as a bearer key is (authenticate.ts),
 * the cookie rows are `BrowserSessions`'. A surface only carries the cookie and checks where a
 * request came from (a page of its own origin); it reads no key and no session row itself.
 */
export class BrowserLogin {
  constructor(
    private readonly auth: Authority,
    private readonly sessions: BrowserSessions,
  ) {}

  /** A new cookie session for the operator a key or a login token names; else unauthenticated. */
  async login(
    credential: { key: string } | { token: string },
  ): Promise<{ operator: string; cookie: string; maxAgeSeconds: number }> {
    const operator =
      'key' in credential
        ? await operatorOfKey(this.auth, credential.key)
        : this.sessions.redeem(credential.token);
    if (!operator) {
      throw unauthenticated(
        'key' in credential ? 'invalid API key' : 'this login link was already used or has expired',
      );
    }
    const session = await this.sessions.open(operator);
    return { operator, cookie: session.id, maxAgeSeconds: session.maxAgeSeconds };
  }

  /**
   * The operator principal a cookie stands for. A revoked key ends its browser sessions too:
   * the operator must still hold a live key, else the session is closed and refused.
   */
  async principal(cookie: string, zone?: string): Promise<Principal> {
    const name = await this.sessions.operatorOf(cookie);
    if (!name) throw unauthenticated('the browser session has ended: log in again');
    if (!(await operatorHoldsKey(this.auth.store, name))) {
      await this.sessions.close(cookie);
      throw unauthenticated(`operator ${name} holds no key any more: log in again`);
    }
    return { kind: 'operator', name, zone: zone || DEFAULT_ZONE };
  }

  logout(cookie: string | undefined): Promise<void> {
    return this.sessions.close(cookie);
  }

  /** A one-time login token for the first operator holding a key (the link `serve` prints), or null. */
  async loginToken(): Promise<string | null> {
    const name = await firstOperator(this.auth.store);
    return name ? this.sessions.mintLoginToken(name) : null;
  }
}
