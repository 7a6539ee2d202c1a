import { type InputIssue, inputProblem, parseCommandArgs } from './args.ts';
import { ApiError, callSyscall, UnreachableError } from './client.ts';
import {
  buildCommands,
  type CommandEntry,
  commandsUnder,
  matchCommand,
  type SyscallCommand,
} from './commands.ts';
import { CliError, UsageError } from './errors.ts';
import { GLOBAL_OPTIONS, resolveEndpoint } from './globals.ts';
import { commandHelp, groupHelp, mainHelp } from './help.ts';
import { loadSpecs } from './manifest.ts';
import { type CliIO, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type LocalCommand } from './types.ts';
import { renderOutput } from './views/index.ts';
import { visible, visibleJson } from './visible.ts';

export type { CliIO, LocalCommand } from './types.ts';

/** `warren …`: finds the command, parses it, calls the server, prints. Returns the exit code. */
export async function runCli(
  argv: string[],
  io: CliIO,
  localCommands: readonly LocalCommand[] = [],
): Promise<number> {
  try {
    const commands = buildCommands(await loadSpecs(), localCommands);
    return await dispatchCommand(commands, argv, io);
  } catch (error) {
    return report(error, io);
  }
}

async function dispatchCommand(
  commands: readonly CommandEntry[],
  argv: string[],
  io: CliIO,
): Promise<number> {
  const { leading, words, rest } = splitArgv(argv);
  const wantsHelp = asksForHelp(argv);
  const match = matchCommand(commands, words);
  if (!match) return noCommand(commands, words, leading, wantsHelp, io);

  const args = [...leading, ...words.slice(match.consumed), ...rest];
  const entry = match.entry;
  if (asksForHelp(args)) {
    io.stdout.write(commandHelp(entry, commandsUnder(commands, entry.words)));
    return EXIT_OK;
  }
  if (entry.kind === 'local') return entry.local.run(args, io);
  return runSyscall(entry, args, io);
}

async function runSyscall(cmd: SyscallCommand, args: string[], io: CliIO): Promise<number> {
  const { input, globals } = parseCommandArgs(cmd, args, io.cwd ?? process.cwd());
  const endpoint = resolveEndpoint(globals, io);
  const exit = cmd.exit;
  const output = await callSyscall(cmd, input, endpoint).catch((error: unknown) => {
    if (error instanceof UnreachableError && exit?.unreachable !== undefined) {
      // A command scripts branch on (`warren status`) says "unreachable" with its own code.
      io.stderr.write(`warren: ${error.message}\n`);
      return UNREACHABLE;
    }
    throw (
      (error instanceof ApiError && error.code === 'invalid_input'
        ? inputProblem(cmd, input, issuesOf(error))
        : undefined) ?? error
    );
  });
  if (output === UNREACHABLE) return exit?.unreachable ?? EXIT_FAILURE;
  if (globals.json) {
    io.stdout.write(`${visibleJson(JSON.stringify(output, null, 2))}\n`);
  } else {
    const width = terminalWidth(io);
    // Tables escape their cells; this catches what a view prints outside one (names in a sentence).
    io.stdout.write(visible(renderOutput(cmd.name, output, width ? { width } : {}), { keepNewlines: true }));
  }
  if (exit) return exit.codes[String((output as Record<string, unknown> | null)?.[exit.field])] ?? EXIT_OK;
  return EXIT_OK;
}

const UNREACHABLE = Symbol('unreachable');

/** The schema's own issues, as the server lists them in the error's details. */
const issuesOf = (error: ApiError): InputIssue[] => {
  const issues = error.details?.issues;
  return Array.isArray(issues)
    ? issues.filter((i): i is InputIssue => typeof i?.path === 'string' && typeof i?.message === 'string')
    : [];
};

function noCommand(
  commands: readonly CommandEntry[],
  words: string[],
  leading: string[],
  wantsHelp: boolean,
  io: CliIO,
): number {
  if (words.length === 0) {
    if (leading.length && !wantsHelp) throw new UsageError('missing command');
    io.stdout.write(mainHelp(commands));
    return EXIT_OK;
  }
  // `warren streams` or `warren streams bogus`: show what lives under the longest known prefix.
  for (let n = words.length; n > 0; n--) {
    const prefix = words.slice(0, n);
    const members = commandsUnder(commands, prefix);
    if (members.length === 0) continue;
    if (wantsHelp && n === words.length) {
      io.stdout.write(groupHelp(prefix, members));
      return EXIT_OK;
    }
    const problem =
      n === words.length
        ? `'${prefix.join(' ')}' needs a subcommand`
        : `unknown command '${words.slice(0, n + 1).join(' ')}'`;
    io.stderr.write(`warren: ${problem}\n\n${groupHelp(prefix, members)}`);
    return EXIT_USAGE;
  }
  throw new UsageError(`unknown command '${words[0]}'`);
}

/**
 * Global options may come before the command (`warren --json ps`): set them aside, then
 * take the run of plain words that names the command (and maybe its first arguments).
 */
function splitArgv(argv: string[]): { leading: string[]; words: string[]; rest: string[] } {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const token = argv[i]!;
    const option = globalOptionOf(token);
    if (!option) break;
    leading.push(token);
    if (option.type === 'string' && !token.includes('=') && i + 1 < argv.length) leading.push(argv[++i]!);
    i++;
  }
  const start = i;
  while (i < argv.length && !argv[i]!.startsWith('-')) i++;
  return { leading, words: argv.slice(start, i), rest: argv.slice(i) };
}

function globalOptionOf(token: string): { type: 'string' | 'boolean' } | undefined {
  if (token === '-h') return GLOBAL_OPTIONS.help;
  if (!token.startsWith('--')) return undefined;
  const name = token.slice(2).split('=')[0]!;
  return Object.hasOwn(GLOBAL_OPTIONS, name)
    ? GLOBAL_OPTIONS[name as keyof typeof GLOBAL_OPTIONS]
    : undefined;
}

/** `--help` anywhere before a `--` terminator. */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

function terminalWidth(io: CliIO): number | undefined {
  if (io.stdout.isTTY && io.stdout.columns) return io.stdout.columns;
  const fromEnv = Number(io.env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : undefined;
}

function report(error: unknown, io: CliIO): number {
  if (error instanceof UsageError) {
    const help = error.command?.length ? `warren ${error.command.join(' ')} --help` : 'warren --help';
    io.stderr.write(`warren: ${visible(error.message, { keepNewlines: true })}\nRun '${help}' for usage.\n`);
    return EXIT_USAGE;
  }
  if (error instanceof ApiError) {
    io.stderr.write(`error [${error.code}]: ${visible(error.message, { keepNewlines: true })}\n`);
    return EXIT_FAILURE;
  }
  if (error instanceof CliError) {
    io.stderr.write(`warren${error.command ? ` ${error.command}` : ''}: ${error.message}\n`);
    return error.exit;
  }
  if (error instanceof UnreachableError) {
    io.stderr.write(`warren: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  io.stderr.write(
    `warren: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return EXIT_FAILURE;
}
