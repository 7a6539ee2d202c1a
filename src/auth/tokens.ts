import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a well-signed session token claims: its session and the generation it was minted for. */
export interface TokenClaim {
  sessionId: string;
  gen: number;
}

const TOKEN = /^wst_([a-z0-9_]+)\.(\d{1,9})\.([A-Za-z0-9_-]{43})$/;

const mac = (secret: Uint8Array, sessionId: string, gen: number) =>
  createHmac('sha256', secret).update(`${sessionId}.${gen}`).digest('base64url');

/**
 * Session tokens: `wst_<session>.<gen>.<mac>`, the MAC over id and generation. They are
 * derived, not stored; a token is valid only while its generation is the session row's
 * `token_gen` (bumped on resume, so an orphaned process's old token stops working) and the
 * session has not stopped — that part is checked against the row by `authenticate`.
 */
export class TokenSigner {
  readonly #secret: Uint8Array;

  constructor(secret: Uint8Array) {
    if (secret.length < 16) throw new Error('the token secret must be at least 16 bytes');
    this.#secret = secret;
  }

  mint(sessionId: string, gen: number): string {
    return `wst_${sessionId}.${gen}.${mac(this.#secret, sessionId, gen)}`;
  }

  /** The claim of a token signed with this secret, or null. Says nothing about the session's state. */
  verify(token: string): TokenClaim | null {
    const m = TOKEN.exec(token);
    if (!m) return null;
    const [, sessionId, genText, sig] = m as unknown as [string, string, string, string];
    const gen = Number(genText);
    const want = Buffer.from(mac(this.#secret, sessionId, gen));
    const got = Buffer.from(sig);
    return want.length === got.length && timingSafeEqual(want, got) ? { sessionId, gen } : null;
  }
}
