import { definePlugin } from '../../contract/plugin.ts';
import type { TurnsInstance } from './common.ts';
import { type TurnsConfig, turnsConfig } from './config.ts';
import { delegateSyscalls } from './delegate.ts';
import { TurnEngine } from './engine.ts';
import { turnsMigrations } from './migrations.ts';
import { qaSyscalls } from './qa-syscalls.ts';
import { readSyscalls } from './read-syscalls.ts';
import type { TurnsDb } from './schema.ts';
import { sessionSyscalls } from './session-syscalls.ts';
import { bridgeAwaitTurn, bridgeReadStatus, bridgeReadTurn, bridgeSendPrompt } from './turn-syscalls.ts';
import { CommitWaits } from './wait.ts';
import { bridgeWatchEvents } from './watch.ts';
import { WorktreeReaper } from './worktrees.ts';

/**
 * Turns: the coordinator bridge (seed 004). An external coordinator starts or adopts
 * sessions, hands them bounded prompts as durable turns, awaits them, answers their
 * questions, reads tails and artifacts, writes reports and long-polls the log. Read-only and
 * fail-closed unless mutation classes are enabled. See docs/coordinator-bridge.md.
 */
export const turnsPlugin = definePlugin<TurnsConfig, TurnsDb>({
  name: 'turns',
  version: '0.1.0',
  summary: 'durable turns, questions, reports, artifacts and a long-polled log for external coordinators',
  migrations: turnsMigrations,
  config: turnsConfig,
  syscalls: [
    bridgeSendPrompt,
    bridgeReadTurn,
    bridgeAwaitTurn,
    bridgeReadStatus,
    bridgeWatchEvents,
    ...qaSyscalls,
    ...readSyscalls,
    ...sessionSyscalls,
    ...delegateSyscalls,
  ],
  async start({ kernel, tables, config, log }): Promise<TurnsInstance> {
    const policy = {
      mutations: config.mutations,
      workdirRoots: config.workdirRoots,
      profile: config.profile,
      repo: config.repo,
      artifactByteCap: config.artifactByteCap,
      responseByteCap: config.responseByteCap,
    };
    const commits = new CommitWaits(kernel.clock);
    const engine = new TurnEngine(kernel, tables, commits, policy, log);
    await engine.start();
    const reaper = new WorktreeReaper(tables, log);
    return {
      engine,
      policy,
      tables,
      commits,
      sessionCommand: config.sessionCommand,
      onCommit: (events) => {
        commits.publish(events);
        reaper.onCommit(events);
      },
      async stop() {
        commits.close();
        await engine.stop();
        await reaper.stop();
      },
    };
  },
});
