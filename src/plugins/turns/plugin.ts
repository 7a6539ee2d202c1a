import { definePlugin } from '../../contract/plugin.ts';
import { turnsConfig } from './config.ts';
import { delegateSyscalls } from './delegate.ts';
import { TurnEngine } from './engine.ts';
import { turnsMigrations } from './migrations.ts';
import { qaSyscalls } from './qa-syscalls.ts';
import { readSyscalls } from './read-syscalls.ts';
import { sessionSyscalls } from './session-syscalls.ts';
import { bridgeAwaitTurn, bridgeReadStatus, bridgeReadTurn, bridgeSendPrompt } from './turn-syscalls.ts';
import { bridgeWatchEvents } from './watch.ts';
import { WorktreeReaper } from './worktrees.ts';

/**
 * Turns: the coordinator bridge (seed 004). An external coordinator starts or adopts
 * sessions, hands them bounded prompts as durable turns, awaits them, answers their
 * questions, reads tails and artifacts, writes reports and long-polls the log. Read-only and
 * fail-closed unless mutation classes are enabled. See docs/coordinator-bridge.md.
 */
export const turnsPlugin = definePlugin({
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
  async start({ kernel, config, log }) {
    const policy = {
      mutations: config.mutations,
      workdirRoots: config.workdirRoots,
      profile: config.profile,
      repo: config.repo,
      artifactByteCap: config.artifactByteCap,
      responseByteCap: config.responseByteCap,
    };
    const engine = new TurnEngine(kernel, policy, log);
    await engine.start();
    const reaper = new WorktreeReaper(kernel, log);
    return {
      engine,
      policy,
      sessionCommand: config.sessionCommand,
      onCommit: (events) => reaper.onCommit(events),
      async stop() {
        await engine.stop();
        await reaper.stop();
      },
    };
  },
});
