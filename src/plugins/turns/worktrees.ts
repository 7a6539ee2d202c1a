import { execFile } from 'node:child_process';
import type { LogEvent } from '../../store/events.ts';
import type { Log } from '../../util/log.ts';
import type { TurnsTables } from './schema.ts';

/**
 * Worktrees by policy: a session started with `worktree_policy: remove` has its worktree
 * removed (`git worktree remove --force`) once it stops; `keep` (the default) leaves it for
 * resume and review. Runs off the commit path; a failure is logged, never retried blindly.
 */
export class WorktreeReaper {
  private pending = Promise.resolve();

  constructor(
    private readonly tables: TurnsTables,
    private readonly log: Log,
  ) {}

  onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type !== 'session.status' || e.payload.to !== 'stopped' || !e.session_id) continue;
      const id = e.session_id;
      this.pending = this.pending.then(() => this.reap(id)).catch(() => {});
    }
  }

  private async reap(sessionId: string): Promise<void> {
    const s = await this.tables.reader
      .selectFrom('turns_sessions')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    if (!s?.worktree || !s.project || s.worktree_policy !== 'remove') return;
    const { worktree, project } = s;
    await new Promise<void>((resolve) => {
      execFile(
        'git',
        ['-C', project, 'worktree', 'remove', '--force', worktree],
        { timeout: 30_000 },
        (error) => {
          if (error)
            this.log.warn({ session: sessionId, err: error.message }, 'turns: removing a worktree failed');
          resolve();
        },
      );
    });
    // Only an append: a unit that never isolates opens no transaction.
    await this.tables.write(
      async (tx) => {
        tx.append({
          zone: s.zone,
          type: 'coordinator.worktree_removed',
          actor: 'turns',
          session_id: sessionId,
          payload: { session_id: sessionId, worktree, ref: `session:${sessionId}` },
        });
      },
      { readsFirst: true },
    );
  }

  /** Let a removal in progress finish. */
  stop(): Promise<void> {
    return this.pending;
  }
}
