/** What the CLI writes to and reads from; `process` in production, buffers in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
  /** Terminal width, when stdout is a terminal. */
  columns?: number;
  isTTY?: boolean;
}

export interface CliIO {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Readonly<Record<string, string | undefined>>;
  /** Base for relative paths (`@file`, the data dir); default `process.cwd()`. */
  cwd?: string;
  /** Where commands that take data read it (`secrets set`); default `process.stdin`. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
}

/** A command that is not a syscall (`serve`, `demo`, `mcp`): it parses its own arguments. */
export interface LocalCommand {
  command: string[];
  summary: string;
  /** Printed verbatim by `warren <command> --help`, after the summary. */
  usage: string;
  /** Help section it is listed under; default `server`. */
  group?: string;
  /** Gets every argument except the command words (global options included). */
  run(args: string[], io: CliIO): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
