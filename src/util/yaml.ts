import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

/**
 * The YAML parser, loaded on first use: most runs read no YAML (JSON config, scripts given
 * as objects), and loading it costs a CLI or server start tens of milliseconds. The
 * require is synchronous so callers stay synchronous.
 */
export const yaml = (): Yaml => createRequire(import.meta.url)('yaml') as Yaml;
