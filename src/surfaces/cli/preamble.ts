import { parseArgs } from 'node:util';
import { globalParseOptions } from './args.ts';
import { CliError, UsageError } from './errors.ts';
import {
  type Endpoint,
  type GlobalName,
  type Globals,
  operatorKey,
  resolveEndpoint,
  serverUrl,
  zoneOf,
} from './globals.ts';
import { type CliIO, EXIT_USAGE } from './types.ts';

/** A command's own option, as node's parseArgs takes it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean'
  ? O['multiple'] extends true
    ? boolean[]
    : boolean
  : O['multiple'] extends true
    ? string[]
    : string;

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** The command's words: `warren <words>: …` when it refuses, its help on a parse error. */
  words: readonly string[];
  /** The global options it takes (--url, --key, --zone, --data-dir, --json, --help). */
  globals?: readonly GlobalName[];
  /** Its own options. */
  options?: O;
  /** Whether it takes positional arguments. */
  positionals?: boolean;
}

/** A hand-written command's arguments, and what it needs to call the server and print. */
export interface Preamble<O extends Record<string, OptionSpec>> {
  values: Globals & { [K in keyof O]?: ValueOf<O[K]> };
  positionals: string[];
  /** A refusal to throw: `warren <words>: message` on stderr, exit `exit` (2, usage, unless told). */
  fail(message: string, exit?: number): CliError;
  /** The server: --url, else WARREN_URL, else the default. */
  url(): string;
  /** The zone: --zone, else WARREN_ZONE. */
  zone(): string | undefined;
  /** The operator key (--key, WARREN_API_KEY, the data dir's key file), or the file looked for. */
  operatorKey(): { key: string } | { missing: string };
  /** Where to call and as whom; a CliError when there is no operator key. */
  endpoint(): Endpoint;
  /** The headers a request to the server carries: `credential` as the bearer, and the zone. */
  headers(credential: string): Record<string, string>;
  /** `out` as one line of JSON with --json, else `text`. */
  print(out: unknown, text: string): void;
}

/**
 * What every hand-written command (`serve`, `mcp`, `secrets set`, …) starts with: its
 * arguments parsed strictly (a bad one is a usage error naming the command), the global
 * options it takes beside its own; then, as it asks for them, the server's URL, the zone, the
 * operator key, the endpoint or headers to call with, output as text or --json, and refusals
 * that runCli turns into a message and an exit code. `--help` never gets here: runCli answers
 * it for every command.
 */
export function preamble<O extends Record<string, OptionSpec> = Record<never, OptionSpec>>(
  args: string[],
  io: CliIO,
  spec: CommandSpec<O>,
): Preamble<O> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: spec.positionals ?? false,
      options: { ...globalParseOptions(spec.globals ?? []), ...spec.options },
    });
  } catch (error) {
    // parseArgs says what was wrong ("Unknown option '--max-depht'"); the hint points at the help.
    throw new UsageError((error as Error).message, spec.words);
  }
  const values = parsed.values as Preamble<O>['values'];
  return {
    values,
    positionals: parsed.positionals,
    fail: (message, exit = EXIT_USAGE) => new CliError(message, exit, spec.words.join(' ')),
    url: () => serverUrl(values, io),
    zone: () => zoneOf(values, io),
    operatorKey: () => operatorKey(values, io),
    endpoint: () => resolveEndpoint(values, io),
    headers(credential) {
      const zone = zoneOf(values, io);
      return { authorization: `Bearer ${credential}`, ...(zone ? { 'x-warren-zone': zone } : {}) };
    },
    print: (out, text) => io.stdout.write(values.json ? `${JSON.stringify(out)}\n` : text),
  };
}
