import { callSyscall } from './client.ts';
import { UsageError } from './errors.ts';
import { GLOBAL_NAMES } from './globals.ts';
import { readCapped } from './input.ts';
import { preamble } from './preamble.ts';
import { type CliIO, EXIT_OK, type LocalCommand } from './types.ts';

/** The route of `secrets_set` (the client carries no server code, so it is named here). */
const SECRETS_SET = { name: 'secrets_set', http: { method: 'POST' as const, path: '/v1/secrets/:name' } };
const MAX_VALUE = 65_536;

/**
 * `warren secrets set NAME`: the value comes from stdin, never from the command line (where
 * every user of the host could read it in the process list, and shells keep history). On a
 * terminal it is asked for without echo; piped, it is read to the end, one trailing newline
 * dropped.
 */
export const secretsSetCommand: LocalCommand = {
  command: ['secrets', 'set'],
  group: 'server',
  summary: 'Store a named secret; the value is read from stdin',
  usage: [
    'warren secrets set NAME [--url …] [--key …] [--zone …]',
    '',
    'The value is read from stdin (typed without echo on a terminal), never from an argument:',
    '  printf %s "$ANTHROPIC_API_KEY" | warren secrets set anthropic',
    'Spawns reference it by name: --secret-env \'{"ANTHROPIC_API_KEY":"anthropic"}\'.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, { words: ['secrets', 'set'], globals: GLOBAL_NAMES, positionals: true });
    const { positionals } = cmd;
    if (positionals.length !== 1) {
      throw new UsageError('give exactly one secret name; the value is read from stdin', ['secrets', 'set']);
    }
    const name = positionals[0]!;
    const stdin = io.stdin ?? process.stdin;
    const value = stdin.isTTY ? await askHidden(stdin, io, name) : stripNewline(await readAll(stdin));
    if (value.length === 0) throw new UsageError('the value read from stdin is empty', ['secrets', 'set']);
    const out = (await callSyscall(SECRETS_SET, { name, value }, cmd.endpoint())) as {
      name: string;
      created: boolean;
    };
    cmd.print(out, `${out.created ? 'stored' : 'replaced'} secret ${out.name}\n`);
    return EXIT_OK;
  },
};

const readAll = (stream: NodeJS.ReadableStream) =>
  readCapped(
    stream,
    MAX_VALUE,
    () => new UsageError(`a secret is at most ${MAX_VALUE} bytes`, ['secrets', 'set']),
  );

const stripNewline = (s: string) => s.replace(/\r?\n$/, '');

/** Read one line from a terminal with echo off (raw mode), as `passwd` does. */
function askHidden(stdin: NonNullable<CliIO['stdin']>, io: CliIO, name: string): Promise<string> {
  io.stderr.write(`value for ${name} (not shown): `);
  stdin.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new UsageError('cancelled', ['secrets', 'set']));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
