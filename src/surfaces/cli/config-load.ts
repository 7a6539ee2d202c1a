import type { ConfigError } from '../../config/errors.ts';
import type { LoadedConfig, loadConfig } from '../../config/load.ts';
import type { ConfigArgs } from './config-args.ts';
import { CliError } from './errors.ts';
import { type CliIO, EXIT_USAGE } from './types.ts';

/** The configuration loader: src/config/, or the server bundle's copy of it. */
export interface ConfigLoader {
  loadConfig: typeof loadConfig;
  ConfigError: typeof ConfigError;
}

/**
 * Resolve the configuration for a local command; a CliError (exit 2) says why it cannot be
 * used. The loader (zod, the syscall table) is imported here, when a command needs it, never
 * by `--help`; `serve` passes the server bundle's own.
 */
export async function loadOrReport(
  parsed: ConfigArgs,
  io: CliIO,
  loader?: ConfigLoader,
): Promise<LoadedConfig> {
  const { loadConfig, ConfigError } = loader ?? (await ownLoader());
  try {
    return loadConfig({
      flags: parsed.flags,
      configFile: parsed.configFile,
      env: io.env,
      cwd: io.cwd ?? process.cwd(),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new CliError(`configuration: ${error.message.replaceAll('\n', '\n  ')}`, EXIT_USAGE);
  }
}

async function ownLoader(): Promise<ConfigLoader> {
  const [{ loadConfig }, { ConfigError }] = await Promise.all([
    import('../../config/load.ts'),
    import('../../config/errors.ts'),
  ]);
  return { loadConfig, ConfigError };
}
