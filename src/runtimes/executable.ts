import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeUnavailable } from './errors.ts';
import { resolveExecutable } from './process.ts';

/** Where an agent CLI is looked for, in order. */
export interface ExecutableSource {
  /** The runtime's name, for errors. */
  runtime: string;
  /** The executable's name (`claude`, `codex`). */
  bin: string;
  /** The variable naming it (`WARREN_CLAUDE_BIN`): a spawn's env, then the server's. */
  envVar: string;
  /** The `config` key naming it (`claudePath`), for errors. */
  configKey: string;
  /** The npm package that ships it, for the error's advice. */
  packageName: string;
}

/**
 * Finds an agent CLI: an explicit `config` path → the env var → `node_modules/.bin` of this
 * package (or a directory above it, when warren is itself a dependency) → PATH. The
 * node_modules walk is cached per instance (one per runtime), never per module.
 */
export class ExecutableLookup {
  private bundled: string | null | undefined;

  constructor(
    private readonly source: ExecutableSource,
    private readonly server: NodeJS.ProcessEnv = process.env,
  ) {}

  resolve(configPath: string | undefined, spawnEnv: Record<string, string> = {}): string {
    const { runtime, bin, envVar, configKey, packageName } = this.source;
    const explicit = configPath
      ? { path: configPath, from: `config.${configKey}` }
      : spawnEnv[envVar] || this.server[envVar]
        ? { path: (spawnEnv[envVar] || this.server[envVar])!, from: envVar }
        : null;
    if (explicit) {
      const found = resolveExecutable(explicit.path, this.server.PATH ?? '');
      if (found) return found;
      throw runtimeUnavailable(
        runtime,
        explicit.path,
        `executable ${JSON.stringify(explicit.path)} (from ${explicit.from}) was not found or is not executable`,
        explicit.from,
      );
    }
    const found = this.bundledBin() ?? resolveExecutable(bin, this.server.PATH ?? '');
    if (found) return found;
    throw runtimeUnavailable(
      runtime,
      bin,
      `the ${bin} CLI was not found on PATH or in node_modules/.bin beside warren: install ${packageName}, or set config.${configKey} or ${envVar}`,
    );
  }

  private bundledBin(): string | null {
    if (this.bundled !== undefined) return this.bundled;
    let dir = dirname(fileURLToPath(import.meta.url));
    for (;;) {
      const found = resolveExecutable(join(dir, 'node_modules', '.bin', this.source.bin));
      const up = dirname(dir);
      if (found || up === dir) {
        this.bundled = found;
        return found;
      }
      dir = up;
    }
  }
}
