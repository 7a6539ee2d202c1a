import { WarrenError } from '../../vocab/errors.ts';
import type { Usage } from '../../vocab/usage.ts';
import { breach } from '../breach.ts';
import { parseIds, SCOPE_COLUMNS } from '../budget.ts';
import type { Core } from '../core.ts';
import { sessionIn } from '../lookup.ts';
import { recordUsage } from '../usage.ts';
import { type CallEstimate, estimateInputTokens, type Refusal, refusal } from './admit.ts';
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

  constructor(private readonly core: Core) {}

  private prices(): PriceTable {
    return { ...DEFAULT_PRICES, ...this.core.config.gateway.prices };
  }

  /**
   * The caller behind a verified token claim: its session must be live, the token of its
   * current generation, and its agent running here with an upstream held. A stopped session's
   * credential is refused (it died with the session), as is a resumed one's older token.
   */
  async caller(sessionId: string, gen: number, provider: Provider): Promise<GatewayCaller> {
    const row = await this.core.store.reader
      .selectFrom('sessions')
      .select(['zone', 'status', 'token_gen', 'budget_scope'])
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (!row || row.status === 'stopped' || (row.token_gen ?? 0) !== gen) {
      this.upstreams.release(sessionId, gen);
      throw new WarrenError('unauthenticated', 'this credential is not (or no longer) valid');
    }
    const upstream = this.upstreams.get(sessionId, gen, provider);
    if (!upstream)
      throw new WarrenError(
        'unauthenticated',
        `session ${sessionId} has no ${provider} upstream at this gateway`,
      );
    return { sessionId, zone: row.zone, scope: parseIds(row.budget_scope), upstream };
  }

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

  /**
   * One answered call's usage, as the provider counted it: a `session.usage` event (source
   * `gateway`) and the session's and subtree's totals, whose budgets are enforced as for any
   * report. Input counts cache reads and writes, as claude-code's own reports did.
   */
  async meter(c: GatewayCaller, provider: Provider, model: string, u: ModelUsage): Promise<void> {
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
        payload: { ...usage, source: 'gateway', provider, model, priced: cost !== null },
      });
      await recordUsage(tx, this.core, row, usage);
    });
  }
}
