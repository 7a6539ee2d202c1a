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

/** The CLI is set up wrong (no key, bad URL): exit 1, no usage hint. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
