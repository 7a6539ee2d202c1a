import { execFile } from 'node:child_process';

/**
 * Debian's tmux, driven through its CLI (never a shell): visible sessions run there, and
 * adopted panes are written to and read from. Every call is bounded in time.
 */

const TMUX_TIMEOUT_MS = 5_000;

function tmux(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'tmux',
      args,
      { timeout: TMUX_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`tmux ${args[0]}: ${String(stderr).trim() || error.message}`));
        else resolve(stdout);
      },
    );
  });
}

/** A tmux target: `session`, `session:window` or `session:window.pane`, or a pane id `%N`. */
export const TMUX_TARGET = /^(%[0-9]{1,6}|[A-Za-z0-9_-]{1,64}(:[0-9]{1,4}(\.[0-9]{1,4})?)?)$/;

/** Literal text then Enter: `-l` keeps tmux from reading key names out of the prompt. */
export async function sendKeys(target: string, text: string): Promise<void> {
  await tmux(['send-keys', '-t', target, '-l', text]);
  await tmux(['send-keys', '-t', target, 'Enter']);
}

/** Whether the pane exists and its process is alive. */
export async function paneAlive(target: string): Promise<boolean> {
  try {
    return (await tmux(['display-message', '-p', '-t', target, '#{pane_dead}'])).trim() === '0';
  } catch {
    return false;
  }
}

/**
 * The pane's working directory. tmux reads it from the pane's process, and a pane started a
 * moment ago may not show one yet: ask again for a short while before saying so.
 */
export async function paneCwd(target: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const cwd = (await tmux(['display-message', '-p', '-t', target, '#{pane_current_path}'])).trim();
    if (cwd !== '' || attempt === 20) return cwd;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The last `lines` lines of a pane (advisory: what the screen shows, not the turn's outcome). */
export async function capturePane(target: string, lines: number): Promise<string> {
  return tmux(['capture-pane', '-p', '-J', '-t', target, '-S', `-${lines}`]);
}

/** A detached session running `argv` in `cwd`. */
export async function newSession(name: string, cwd: string, argv: readonly string[]): Promise<void> {
  await tmux(['new-session', '-d', '-s', name, '-c', cwd, '--', ...argv]);
}

export async function killSession(name: string): Promise<void> {
  await tmux(['kill-session', '-t', name]);
}
