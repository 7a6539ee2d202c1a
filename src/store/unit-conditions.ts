import { AsyncLocalStorage } from 'node:async_hooks';
import type { WriteTx } from './writer.ts';

/** A check run first in a unit's transaction; it throws to refuse the unit. */
export type UnitCondition = (tx: WriteTx) => Promise<void>;

interface Scope {
  check: UnitCondition;
  /** Cleared when the call that set it returns: work it left running is not conditioned. */
  active: boolean;
}

/**
 * Conditions on every write unit queued during a call (docs/scaling.md: a session's writes
 * are conditioned on its owner's epoch). An agent's call writes through many kernel paths;
 * rather than thread a condition through each, the call runs inside `run` and the writer
 * prefixes each unit queued meanwhile with the check, in the unit's own transaction.
 */
export class UnitConditions {
  private readonly scope = new AsyncLocalStorage<Scope>();

  async run<R>(check: UnitCondition, fn: () => Promise<R>): Promise<R> {
    const s: Scope = { check, active: true };
    try {
      return await this.scope.run(s, fn);
    } finally {
      s.active = false;
    }
  }

  /** The condition of the call queuing a unit now, if any. */
  current(): UnitCondition | undefined {
    const s = this.scope.getStore();
    return s?.active ? s.check : undefined;
  }
}
