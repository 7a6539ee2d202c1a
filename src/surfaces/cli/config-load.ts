import type { LoadedConfig } from '../../config/load.ts';
import type { ConfigArgs } from './config-args.ts';
import type { CliIO } from './types.ts';

/**
 * Resolve the configuration for a local command, or print why it cannot be used. The loader
 * (zod, the syscall table) is imported here, when a command needs it, never by `--help`.
 */
export async function loadOrReport(parsed: ConfigArgs, io: CliIO): Promise<LoadedConfig | undefined> {
  const [{ loadConfig }, { ConfigError }] = await Promise.all([
    import('../../config/load.ts'),
    import('../../config/errors.ts'),
  ]);
  try {
    return loadConfig({
      flags: parsed.flags,
      configFile: parsed.configFile,
      env: io.env,
      cwd: io.cwd ?? process.cwd(),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`warren: configuration: ${error.message.replaceAll('\n', '\n  ')}\n`);
    return undefined;
  }
}
