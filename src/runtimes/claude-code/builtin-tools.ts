import type { ClaudeConfig } from './config.ts';

/**
 * Claude Code's built-in tools a warren session gets unless its config names others
 * (`config.tools`; `"default"` is the CLI's whole set). Every tool is paid for on every model
 * request: the CLI's default set is ~65k characters (~16k tokens, 2.1.x), and most of it is
 * machinery warren already gives the agent in its own terms — tasks (`Task*` beside warren's
 * `task_*`), schedules (`Cron*`, `ScheduleWakeup`), teammates (`SendMessage`), worktrees
 * (`EnterWorktree`/`ExitWorktree`), findings (`ReportFindings`) — or interactive workflows a
 * headless session does not run (`Workflow`, `DesignSync`). Two names for one thing is how an
 * agent ends up calling the wrong one. What stays is the work itself: shell, files, notebooks,
 * the web, subagents and skills. Names the CLI does not know are ignored by it, so the list
 * holds across versions (a renamed tool drops out rather than failing the spawn).
 */
export const WORK_TOOLS = [
  'Bash',
  'Read',
  'Edit',
  'Write',
  'NotebookEdit',
  'WebFetch',
  'WebSearch',
  'Agent',
  'Skill',
] as const;

/** The `--tools` value a session runs with. */
export const builtinTools = (config: ClaudeConfig): string => config.tools ?? WORK_TOOLS.join(',');
