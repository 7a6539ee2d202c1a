import { delimiter } from 'node:path';
import { invalid } from '../../vocab/errors.ts';
import { MUTATION_CLASSES, type MutationClass } from './config.ts';

/**
 * Seed 004's tool names as a compatibility preset over warren's own syscalls: transport
 * neutral (the MCP adapter and `setup hermes` read it), no logic of its own.
 */
export const SERVER_NAME = 'warren-coordinator';

export interface PresetTool {
  /** The seed's name. */
  name: string;
  /** The warren syscall it calls. */
  syscall: string;
  /** The mutation class it needs; absent for reads. */
  mutation?: MutationClass;
}

export const COORDINATOR_PRESET: readonly PresetTool[] = [
  { name: 'skc_coordinator_list_sessions', syscall: 'bridge_list_sessions' },
  { name: 'skc_coordinator_read_status', syscall: 'bridge_read_status' },
  { name: 'skc_coordinator_read_tail', syscall: 'bridge_read_tail' },
  { name: 'skc_coordinator_list_questions', syscall: 'bridge_list_questions' },
  { name: 'skc_coordinator_list_artifacts', syscall: 'bridge_list_artifacts' },
  { name: 'skc_coordinator_read_artifact', syscall: 'bridge_read_artifact' },
  { name: 'skc_coordinator_read_coordination_status', syscall: 'bridge_coordination_status' },
  { name: 'skc_coordinator_read_turn', syscall: 'bridge_read_turn' },
  { name: 'skc_coordinator_await_turn', syscall: 'bridge_await_turn' },
  { name: 'skc_coordinator_watch_events', syscall: 'bridge_watch_events' },
  { name: 'skc_coordinator_start_session', syscall: 'bridge_start_session', mutation: 'sessions' },
  { name: 'skc_coordinator_register_session', syscall: 'bridge_register_session', mutation: 'sessions' },
  { name: 'skc_coordinator_send_prompt', syscall: 'bridge_send_prompt', mutation: 'sessions' },
  {
    name: 'skc_coordinator_submit_question_answer',
    syscall: 'bridge_answer_question',
    mutation: 'questions',
  },
  { name: 'skc_coordinator_report_status', syscall: 'bridge_report_status', mutation: 'reports' },
  { name: 'skc_delegate_plan', syscall: 'bridge_delegate_plan', mutation: 'sessions' },
  { name: 'skc_delegate_execute', syscall: 'bridge_delegate_execute', mutation: 'sessions' },
  { name: 'skc_delegate_team', syscall: 'bridge_delegate_team', mutation: 'sessions' },
];

/** What an adapter process is started with: the seed's variables, or warren's own next to them. */
export interface AdapterEnv {
  mutations: MutationClass[];
  workdirRoots: string[];
  profile: string | undefined;
  repo: string | undefined;
  sessionCommand: string | undefined;
  artifactByteCap: number | undefined;
  /**
   * Sessions started through the adapter get a worktree unless the call says otherwise: true
   * (auto name) or a name. From WORKTREE, else from a `skc --worktree [name]` SESSION_COMMAND.
   */
  worktree: true | string | undefined;
}

const pick = (env: NodeJS.ProcessEnv, name: string): string | undefined =>
  env[`WARREN_COORDINATOR_${name}`] ?? env[`SKC_COORDINATOR_MCP_${name}`];

/** Read the adapter's settings; an unknown mutation class or a bad cap is an error, never ignored. */
export function adapterEnv(env: NodeJS.ProcessEnv): AdapterEnv {
  const mutations = (pick(env, 'MUTATIONS') ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const m of mutations) {
    if (!(MUTATION_CLASSES as readonly string[]).includes(m)) {
      throw invalid(`unknown mutation class "${m}" (known: ${MUTATION_CLASSES.join(', ')})`);
    }
  }
  const cap = pick(env, 'ARTIFACT_BYTE_CAP');
  if (cap !== undefined && !/^[1-9][0-9]{0,8}$/.test(cap))
    throw invalid(`ARTIFACT_BYTE_CAP must be a positive integer: ${cap}`);
  return {
    mutations: mutations as MutationClass[],
    workdirRoots: (pick(env, 'WORKDIR_ROOTS') ?? '').split(delimiter).filter(Boolean),
    profile: pick(env, 'PROFILE') || undefined,
    repo: pick(env, 'REPO') || undefined,
    ...sessionCommandOf(pick(env, 'SESSION_COMMAND') || undefined, pick(env, 'WORKTREE')),
    artifactByteCap: cap === undefined ? undefined : Number(cap),
  };
}

/** The launcher words of seed 004's session command (`skc --worktree`); warren's own name too. */
const LAUNCHERS = new Set(['skc', 'warren']);

/**
 * SESSION_COMMAND in either form. Seed 004's `skc --worktree [name]` (or `warren --worktree
 * [name]`) names no program: it says "start each session in a worktree (this one)", which is
 * warren's WORKTREE. Any other command is the program a `command` session runs. WORKTREE,
 * when set, wins over what the command says. A launcher flag warren cannot honour is refused,
 * never dropped.
 */
function sessionCommandOf(
  command: string | undefined,
  worktreeVar: string | undefined,
): Pick<AdapterEnv, 'sessionCommand' | 'worktree'> {
  const words = command?.trim().split(/\s+/) ?? [];
  const launcher = words.length > 0 && LAUNCHERS.has(words[0]!.split('/').pop()!);
  let fromCommand: string | undefined;
  if (launcher) {
    const rest = words.slice(1);
    let used = 0;
    if (rest[0] === '--worktree') {
      const name = rest[1] !== undefined && !rest[1].startsWith('-') ? rest[1] : undefined;
      fromCommand = name ?? 'auto';
      used = name === undefined ? 1 : 2;
    }
    if (rest.length > used)
      throw invalid(
        `SESSION_COMMAND: warren takes "${words[0]} --worktree [name]" and nothing more (not ${rest.slice(used).join(' ')}); set a session's model or program in its start call`,
      );
  }
  const worktree = worktreeVar !== undefined && worktreeVar !== '' ? worktreeVar : fromCommand;
  return { sessionCommand: launcher ? undefined : command, worktree: worktreeOf(worktree) };
}

function worktreeOf(v: string | undefined): true | string | undefined {
  if (v === undefined || v === '' || v === 'off') return undefined;
  if (v === 'auto') return true;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(v)) throw invalid(`WORKTREE must be auto, off or a name: ${v}`);
  return v;
}
