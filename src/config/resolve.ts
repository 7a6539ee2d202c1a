import { resolve as resolvePath } from 'node:path';
import { aliasesInForce } from './aliases.ts';
import { configDefaults } from './defaults.ts';
import { ConfigError } from './errors.ts';
import { findConfigFile, readConfigFile } from './file.ts';
import { CONFIG_FILE_ENV, CONFIG_KEYS, type ConfigKey, KIND_HINT } from './keys.ts';
import { fromText, leafSchema } from './schema.ts';

/**
 * One configuration from three sources: flags > environment (`WARREN_*`) > the config file >
 * (with the coordinator plugin enabled) seed 003's alias variables (aliases.ts) > defaults.
 * Every value remembers where it came from, for `warren config show` and for error messages.
 */

export type Source = 'default' | 'file' | 'env' | 'flag';

export interface Setting {
  value: unknown;
  source: Source;
  /** The file and key, the variable, or the flag that set it. */
  origin: string | null;
}

export interface ConfigInput {
  /** `warren serve` flags by flag name (`max-depth` → `"4"`), as given. */
  flags: Readonly<Record<string, string | undefined>>;
  /** `--config <file>`. */
  configFile?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Base for relative paths (the data dir, the config file). */
  cwd: string;
}

export interface ResolvedConfig {
  /** The config file read, absolute; null when there is none. */
  file: string | null;
  /** The data dir, absolute. */
  dataDir: string;
  settings: ReadonlyMap<string, Setting>;
}

export function resolveConfig(input: ConfigInput): ResolvedConfig {
  const fromFlags = textLayer(
    input.flags,
    (k) => k.flag,
    (k) => `--${k.flag}`,
    'flag',
  );
  const fromEnv = textLayer(
    input.env,
    (k) => k.env,
    (k) => k.env,
    'env',
  );
  // The data dir says where the file is, so it is settled before the file is read.
  const dataDirText = (fromFlags.get('server.dataDir') ?? fromEnv.get('server.dataDir'))?.value;
  const dataDir = resolvePath(input.cwd, (dataDirText as string | undefined) ?? '.warren');
  const named = input.configFile ?? input.env[CONFIG_FILE_ENV];
  const file = findConfigFile(dataDir, named === undefined ? undefined : resolvePath(input.cwd, named));
  const fromFile = new Map<string, Setting>();
  if (file) {
    for (const [path, value] of readConfigFile(file)) {
      fromFile.set(path, { value, source: 'file', origin: `${file}: ${path}` });
    }
  }
  const defaults = configDefaults();
  const settings = new Map<string, Setting>();
  for (const key of CONFIG_KEYS) {
    settings.set(
      key.path,
      fromFlags.get(key.path) ??
        fromEnv.get(key.path) ??
        fromFile.get(key.path) ?? { value: defaults[key.path] ?? null, source: 'default', origin: null },
    );
  }
  // The aliases fill only what is still at its default; whether they apply depends on the
  // plugins the configuration enables, settled just above.
  const enabled = settings.get('plugins.enable')!.value as string[] | null;
  const fromAliases = textLayer(
    Object.fromEntries(aliasesInForce(enabled).map((a) => [a.env, input.env[a.alias]])),
    (k) => k.env,
    (k) => `${aliasesInForce(enabled).find((a) => a.path === k.path)?.alias} (coordinator alias of ${k.env})`,
    'env',
  );
  for (const [path, setting] of fromAliases) {
    if (settings.get(path)!.source === 'default') settings.set(path, setting);
  }
  settings.set('server.dataDir', { ...settings.get('server.dataDir')!, value: dataDir });
  return { file, dataDir, settings };
}

/** Flags or environment variables: text, read as each key's kind and checked by its schema. */
function textLayer(
  texts: Readonly<Record<string, string | undefined>>,
  nameOf: (k: ConfigKey) => string,
  label: (k: ConfigKey) => string,
  source: Source,
): Map<string, Setting> {
  const out = new Map<string, Setting>();
  for (const key of CONFIG_KEYS) {
    const text = texts[nameOf(key)];
    // An empty variable reads as unset, as shells and service managers tend to leave them.
    if (text === undefined || (source === 'env' && text === '')) continue;
    const value = fromText(key.kind, text);
    const result = leafSchema(key).safeParse(value);
    if (!result.success) {
      const why = result.error.issues.map((i) => i.message).join('; ');
      throw new ConfigError(
        `${label(key)}${source === 'env' ? '=' : ' '}${JSON.stringify(text)}: expected ${KIND_HINT[key.kind]} (${why})`,
      );
    }
    out.set(key.path, { value: result.data, source, origin: label(key) });
  }
  return out;
}

/** A setting's value, typed by the caller (the schema has checked it). */
export const settingValue = <T>(config: ResolvedConfig, path: string): T =>
  config.settings.get(path)!.value as T;
