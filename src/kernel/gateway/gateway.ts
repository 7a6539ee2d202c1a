import type { LogEvent } from '../../store/events.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Usage } from '../../vocab/usage.ts';
import { breach } from '../breach.ts';
import { SCOPE_COLUMNS } from '../budget.ts';
import type { Core } from '../core.ts';
import { sessionIn } from '../lookup.ts';
import { recordUsage } from '../usage.ts';
import { type CallEstimate, estimateInputTokens, type Refusal, refusal } from './admit.ts';
import type { BreakerChange } from './breaker.ts';
import { Limiters } from './limiter.ts';
import { costOf, DEFAULT_PRICES, type ModelUsage, type PriceTable, priceOf } from './prices.ts';
import { type Provider, type Upstream, Upstreams } from './upstreams.ts';

/** A session whose agent may call its model now: who it is and where its calls go. */
export interface GatewayCaller {
  sessionId: string;
  zone: string;
  /** The budgeted sessions that cover it (its `budget_scope`). */
  scope: string[];
  upstream: Upstream;
}

/**
 * The kernel's half of the model gateway (the HTTP half is src/surfaces/http/gateway/): which
 * session is calling and where its calls go, whether its budgets let a call through, and
 * what the provider said the call used, recorded as the session's usage.
 */
export class ModelGateway {
  readonly upstreams = new Upstreams();
  /** One per provider key, shared by every agent on it (limiter.ts). */
  readonly limiters: Limiters;

  constructor(private readonly core: Core) {
    this.limiters = new Limiters(() => this.core.config.gateway);
  }

  private prices(): PriceTable {
    return { ...DEFAULT_PRICES, ...this.core.config.gateway.prices };
  }

  /**
   * The caller behind a verified token claim: the agent of that generation of its session
   * must be running here (upstreams.ts). A stopped session's credential is refused (it died
   * with the session), as is a resumed one's older token.
   */
  caller(sessionId: string, gen: number, provider: Provider): GatewayCaller {
    const held = this.upstreams.get(sessionId, gen, provider);
    if (!held) throw new WarrenError('unauthenticated', 'this credential is not (or no longer) valid here');
    return { sessionId, ...held };
  }

  /** A session stopped or was suspended (a commit of this node or another): its credential dies now. */
  onCommit = (events: readonly LogEvent[]): void => {
    if (this.upstreams.size === 0) return;
    for (const e of events) {
      if (e.type !== 'session.status' || !e.session_id) continue;
      const to = e.payload.to;
      if (to === 'stopped' || to === 'suspended') this.upstreams.release(e.session_id);
    }
  };

  /** What a request of this model with a body of `bytes` is expected to use (admit.ts). */
  estimate(model: string, bytes: number): CallEstimate {
    const inputTokens = estimateInputTokens(bytes);
    const price = priceOf(this.prices(), model);
    return { inputTokens, costUsd: price ? (inputTokens * price.input) / 1e6 : null };
  }

  /**
   * Null when the call may go; otherwise why not, after recording it: a `session.model_refused`
   * event on the caller, and the budget breached as its policy says (SIGTERM, then SIGKILL).
   */
  async admit(c: GatewayCaller, model: string, estimate: CallEstimate): Promise<Refusal | null> {
    if (c.scope.length === 0) return null;
    const rows = await this.core.store.reader
      .selectFrom('sessions')
      .select(SCOPE_COLUMNS)
      .where('id', 'in', c.scope)
      .where('status', '!=', 'stopped')
      .execute();
    const r = refusal(rows, estimate, this.core.clock.now());
    if (!r) return null;
    await this.core.store.writer.write(async (tx) => {
      tx.append({
        zone: c.zone,
        type: 'session.model_refused',
        actor: c.sessionId,
        session_id: c.sessionId,
        payload: { model, budgetOf: r.budgetOf, already: r.already, ...r.spent },
      });
      await breach(tx, this.core, r.budgetOf, r.spent, c.sessionId);
    });
    return r;
  }

  /** A 429 or 529 the gateway held and will retry after `waitMs`: in the log, not the agent's. */
  async retried(
    c: GatewayCaller,
    model: string,
    status: number,
    attempt: number,
    waitMs: number,
  ): Promise<void> {
    await this.core.store.writer.write(async (tx) => {
      tx.append({
        zone: c.zone,
        type: 'session.model_retry',
        actor: c.sessionId,
        session_id: c.sessionId,
        payload: { model, status, attempt, waitMs },
      });
    });
  }

  /**
   * A call opened or closed its key's circuit breaker: a `session.model_breaker` event on the
   * caller whose call did (the breaker is the key's: every session on it is held by it).
   */
  async breaker(c: GatewayCaller, provider: Provider, change: BreakerChange): Promise<void> {
    const { until, ...rest } = change;
    await this.core.store.writer.write(async (tx) => {
      tx.append({
        zone: c.zone,
        type: 'session.model_breaker',
        actor: c.sessionId,
        session_id: c.sessionId,
        payload: { provider, ...rest, ...(until ? { until: new Date(until).toISOString() } : {}) },
      });
    });
  }

  /**
   * One answered call's usage, as the provider counted it: a `session.usage` event (source
   * `gateway`) and the session's and subtree's totals, whose budgets are enforced as for any
   * report. Input counts cache reads and writes, as claude-code's own reports did.
   * `estimated`: the answer broke off before the provider said (its input as estimated).
   */
  async meter(
    c: GatewayCaller,
    provider: Provider,
    model: string,
    u: ModelUsage,
    estimated = false,
  ): Promise<void> {
    const cost = costOf(priceOf(this.prices(), model), u);
    const usage: Usage = {
      inputTokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
      outputTokens: u.outputTokens,
      cacheReadTokens: u.cacheReadTokens,
      cacheWriteTokens: u.cacheWriteTokens,
      costUsd: cost ?? 0,
    };
    await this.core.store.writer.write(async (tx) => {
      const row = await sessionIn(tx, c.sessionId);
      if (!row) return;
      tx.append({
        zone: c.zone,
        type: 'session.usage',
        actor: c.sessionId,
        session_id: c.sessionId,
        payload: {
          ...usage,
          source: 'gateway',
          provider,
          model,
          priced: cost !== null,
          ...(estimated ? { estimated: true } : {}),
        },
      });
      await recordUsage(tx, this.core, row, usage);
    });
  }
}
