import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { callSyscall } from './client.ts';
import { UsageError } from './errors.ts';
import { GLOBAL_NAMES } from './globals.ts';
import { readCapped } from './input.ts';
import { preamble } from './preamble.ts';
import { type CliIO, EXIT_OK, type LocalCommand } from './types.ts';

/** The routes of the workpad syscalls (the client carries no server code, so they are named here). */
const READ = { name: 'workpad_read', http: { method: 'GET' as const, path: '/v1/tasks/:task/workpad' } };
const WRITE = { name: 'workpad_write', http: { method: 'POST' as const, path: '/v1/tasks/:task/workpad' } };
/** Read no more than this (the server's own cap, maxWorkpadBytes, is lower by default). */
const MAX_BYTES = 4 * 1024 * 1024;
const WORDS = ['workpad', 'edit'];

interface Workpad {
  task: string;
  version: number;
  body: string;
}

/**
 * `warren workpad edit TASK`: replace a task's workpad with text from stdin or `--file`. With
 * `--version N` the write is refused (conflict) if the workpad moved past N since you read
 * it; without, it replaces whatever version is current.
 */
export const workpadEditCommand: LocalCommand = {
  command: WORDS,
  group: 'knowledge',
  summary: "Replace a task's workpad with text from stdin or a file",
  usage: [
    'warren workpad edit TASK [--file PATH] [--version N] [--json] [--url …] [--key …] [--zone …]',
    '',
    'The new text comes from --file, else from stdin (which must not be a terminal):',
    '  warren workpad show task_01j… --json | jq -r .workpad.body > pad.md   # edit pad.md, then',
    '  warren workpad edit task_01j… --file pad.md --version 3',
    '--version: the version you read; a write since then is refused (conflict), nothing lost.',
    'Without it the text replaces whatever version is current.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, {
      words: WORDS,
      globals: GLOBAL_NAMES,
      options: { file: { type: 'string' }, version: { type: 'string' } },
      positionals: true,
    });
    const { values, positionals } = cmd;
    if (positionals.length !== 1) throw new UsageError('give exactly one task id', WORDS);
    const task = positionals[0]!;
    const body = await readBody(values.file, io);
    const endpoint = cmd.endpoint();
    let version: number;
    if (values.version !== undefined) {
      version = Number(values.version);
      if (!Number.isInteger(version) || version < 0) {
        throw new UsageError(`--version must be a whole number ≥ 0 (got "${values.version}")`, WORDS);
      }
    } else {
      version = ((await callSyscall(READ, { task }, endpoint)) as { workpad: Workpad }).workpad.version;
    }
    const out = (await callSyscall(WRITE, { task, body, version }, endpoint)) as { workpad: Workpad };
    cmd.print(
      out,
      `workpad of ${out.workpad.task}: version ${out.workpad.version} (${Buffer.byteLength(body)} bytes)\n`,
    );
    return EXIT_OK;
  },
};

async function readBody(file: string | undefined, io: CliIO): Promise<string> {
  if (file !== undefined) {
    const path = resolve(io.cwd ?? process.cwd(), file);
    let text: Buffer;
    try {
      text = await readFile(path);
    } catch (error) {
      throw new UsageError(`--file: cannot read ${path}: ${(error as Error).message}`, WORDS);
    }
    if (text.length > MAX_BYTES) throw new UsageError(`--file: over ${MAX_BYTES} bytes`, WORDS);
    return text.toString('utf8');
  }
  const stdin = io.stdin ?? process.stdin;
  if (stdin.isTTY) throw new UsageError('pipe the new text in, or give --file', WORDS);
  return readCapped(stdin, MAX_BYTES, () => new UsageError(`stdin: over ${MAX_BYTES} bytes`, WORDS));
}
