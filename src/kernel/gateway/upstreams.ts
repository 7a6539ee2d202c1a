import type { GatewayProvider } from '../../runtimes/types.ts';

/** A model provider the gateway speaks for: the Anthropic Messages API, the OpenAI Responses API. */
export type Provider = GatewayProvider;

/**
 * Where one session's model calls really go: the provider key and base URL its spawn gave
 * (or the server's own), held by the server and never by the agent.
 */
export interface Upstream {
  /** The provider's base URL, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  /** The credential added to each request upstream. */
  key: string;
  /** How the key is sent: Anthropic's `x-api-key`, or `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN). */
  auth: 'x-api-key' | 'bearer';
}

/** What the gateway knows of a session whose agent runs here (fixed for its life). */
export interface HeldSession {
  zone: string;
  /** The budgeted sessions that cover it (its `budget_scope`, set at spawn). */
  scope: string[];
}

interface Held extends HeldSession {
  gen: number;
  upstreams: Partial<Record<Provider, Upstream>>;
}

/**
 * The upstreams of the sessions whose agents run on this node, in memory only: a key is
 * opened from its secret when the agent starts and dropped when it ends, so it is never
 * written anywhere by the gateway. Keyed by session and token generation: a resumed session's
 * new agent replaces the old one's, and the old one's late release cannot drop the new.
 *
 * An entry is also what makes a credential good at the gateway: it exists exactly while this
 * node runs that generation's agent (dropped when the session stops or is suspended, in the
 * commit's own callback, and when its agent ends), so a call needs no read of the database.
 */
export class Upstreams {
  private readonly held = new Map<string, Held>();

  hold(sessionId: string, gen: number, session: HeldSession, provider: Provider, upstream: Upstream): void {
    const h = this.held.get(sessionId);
    if (h && h.gen === gen) h.upstreams[provider] = upstream;
    else this.held.set(sessionId, { ...session, gen, upstreams: { [provider]: upstream } });
  }

  /** The session and upstream of a session's current agent (its token's generation), or null. */
  get(sessionId: string, gen: number, provider: Provider): (HeldSession & { upstream: Upstream }) | null {
    const h = this.held.get(sessionId);
    const upstream = h && h.gen === gen ? h.upstreams[provider] : undefined;
    return upstream ? { zone: h!.zone, scope: h!.scope, upstream } : null;
  }

  /** The agent ended: forget its upstreams (a later generation's stay). */
  release(sessionId: string, gen?: number): void {
    const h = this.held.get(sessionId);
    if (h && (gen === undefined || h.gen === gen)) this.held.delete(sessionId);
  }

  get size(): number {
    return this.held.size;
  }
}
