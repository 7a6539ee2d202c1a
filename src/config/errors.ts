/**
 * A configuration that cannot be used. The message says where the value came from (the
 * file and its key path, the environment variable, or the flag) and what was expected, so
 * the fix is obvious without reading the code. `warren serve` prints it and exits non-zero.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
