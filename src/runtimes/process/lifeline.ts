/**
 * The agent's process starts as /bin/sh, which leads the new session and process group.
 * It forks one watcher, joins the agent's cgroup if there is one, then execs the agent
 * (so the agent keeps the pid, and it is the group leader) without fd 3.
 *
 * fd 3 is the lifeline: a pipe whose other end only the server (or runner) holds. The watcher
 * blocks reading it (no polling) and sees EOF when the server closes it or dies by any means,
 * SIGKILL included; it then kills the cgroup's members and the whole group, itself last.
 * It ignores HUP, INT and TERM so a graceful stop of the group cannot take it out early,
 * and it holds none of the agent's stdio.
 *
 * With a deadline (a node in a cluster, an agent on a runner: deadline.ts) the watcher also
 * ends the group when the deadline passes: each line the server writes is a beat holding the
 * seconds left from now, and re-arms a timer (a subshell around `sleep`, stopped by USR1 at the
 * next beat: dash has no `read -t`). A server that is paused (SIGSTOP) or cut off writes no
 * beat, so its agents end on their own time, without any other process killing them. The timer
 * ignores USR1 once it has begun to kill, so a late beat cannot leave the group half ended.
 *
 * argv: sh -c LIFELINE warren-agent <cgroup dir or ""> <seconds left or ""> <command> <args…>
 */
export const LIFELINE = [
  'cg=$1; t=$2; shift 2',
  '(',
  "  trap '' HUP INT TERM",
  '  end() {',
  '    if [ -n "$cg" ]; then',
  '      echo 1 > "$cg/cgroup.kill"',
  '      for _ in 1 2 3; do while read -r p; do kill -KILL "$p"; done < "$cg/cgroup.procs"; done',
  '    fi',
  '    kill -KILL 0',
  '  }',
  '  timer=',
  '  arm() {',
  '    if [ -n "$timer" ]; then kill -USR1 "$timer"; fi',
  '    ( s=; trap \'kill -KILL "$s"; wait; exit 0\' USR1; sleep "$1" & s=$!; wait "$s" && { trap \'\' USR1; end; } ) &',
  '    timer=$!',
  '  }',
  '  if [ -n "$t" ]; then',
  '    arm "$t"',
  '    while read -r t <&3; do arm "$t"; done',
  '  else',
  '    read -r _ <&3',
  '  fi',
  '  end',
  ') </dev/null >/dev/null 2>&1 &',
  'if [ -n "$cg" ]; then { echo $$ > "$cg/cgroup.procs"; } 2>/dev/null; fi',
  'exec "$@" 3<&-',
].join('\n');

export const SHELL = '/bin/sh';

/** `secondsLeft`: the watcher's first deadline (deadline.ts); null: it ends the group at EOF only. */
export function lifelineArgv(
  cgroup: string | null,
  secondsLeft: string | null,
  cmd: string,
  args: readonly string[],
): string[] {
  return ['-c', LIFELINE, 'warren-agent', cgroup ?? '', secondsLeft ?? '', cmd, ...args];
}
