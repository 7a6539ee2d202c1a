/**
 * The agent's process starts as /bin/sh, which leads the new session and process group.
 * It forks one watcher, joins the agent's cgroup if there is one, then execs the agent
 * (so the agent keeps the pid, and it is the group leader) without fd 3.
 *
 * fd 3 is the lifeline: a pipe whose other end only the server holds. The watcher blocks
 * reading it (no polling) and sees EOF when the server closes it or dies by any means,
 * SIGKILL included; it then kills the cgroup's members and the whole group, itself last.
 * It ignores HUP, INT and TERM so a graceful stop of the group cannot take it out early,
 * and it holds none of the agent's stdio.
 *
 * argv: sh -c LIFELINE warren-agent <cgroup dir or ""> <command> <args…>
 */
export const LIFELINE = [
  'cg=$1; shift',
  '(',
  "  trap '' HUP INT TERM",
  '  read -r _ <&3',
  '  if [ -n "$cg" ]; then',
  '    echo 1 > "$cg/cgroup.kill"',
  '    for _ in 1 2 3; do while read -r p; do kill -KILL "$p"; done < "$cg/cgroup.procs"; done',
  '  fi',
  '  kill -KILL 0',
  ') </dev/null >/dev/null 2>&1 &',
  'if [ -n "$cg" ]; then { echo $$ > "$cg/cgroup.procs"; } 2>/dev/null; fi',
  'exec "$@" 3<&-',
].join('\n');

export const SHELL = '/bin/sh';

export function lifelineArgv(cgroup: string | null, cmd: string, args: readonly string[]): string[] {
  return ['-c', LIFELINE, 'warren-agent', cgroup ?? '', cmd, ...args];
}
