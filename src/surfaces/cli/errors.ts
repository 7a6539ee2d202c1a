/** The user typed something the CLI cannot make sense of: exit 2, with a pointer to help. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command words, for the `see warren … --help` hint. */
    readonly command?: readonly string[],
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The CLI is set up wrong (no key, bad URL), or a command refuses: `warren: message` (or
 * `warren <command>: message`) on stderr, no usage hint; exit 1 unless told.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exit = 1,
    /** The command words that refused, to name it in the message. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
