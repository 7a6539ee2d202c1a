import { CONFIG_KEYS } from '../../config/keys.ts';
import type { ShownConfig, ShownSetting } from '../../config/show.ts';
import { configFlagsHelp, parseConfigArgs } from './config-args.ts';
import { loadOrReport } from './config-load.ts';
import { renderTable } from './table.ts';
import type { CliIO, LocalCommand } from './types.ts';
import { visibleJson } from './visible.ts';

/**
 * `warren config show`: the configuration `warren serve` would run with, given the same
 * flags, environment and data dir, and where each value came from. Needs no server.
 */
export const configShowCommand: LocalCommand = {
  command: ['config', 'show'],
  summary: 'Print the effective configuration and where each value came from',
  usage: [
    'warren config show [serve settings] [--json]',
    '',
    'Reads what `warren serve` reads (flags, WARREN_* variables, <data dir>/warren.config.json|yaml|yml,',
    'defaults; in that precedence) without starting anything. SOURCE is default, file, env or flag;',
    'FROM names the file and key, the variable or the flag. Tiers show the tools sessions really get',
    '(after the default grants).',
    '',
    'Accepts every `warren serve` setting (flag, environment variable, meaning):',
    ...configFlagsHelp(),
    '',
    '  --json  the same as JSON: { file, settings: { <key>: { value, source, from, env, flag } } }',
    '',
    'Examples:',
    '  warren config show',
    '  warren config show --data-dir /srv/warren --max-depth 4 --json',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const parsed = parseConfigArgs(args, io, ['json'], ['config', 'show']);
    const loaded = await loadOrReport(parsed, io);
    const { showConfig } = await import('../../config/show.ts');
    const shown = showConfig(loaded);
    io.stdout.write(
      parsed.switches.json ? `${visibleJson(JSON.stringify(shown, null, 2))}\n` : renderShown(shown),
    );
    return 0;
  },
};

/** Lists wrap onto continuation rows rather than being cut: a tier's tools are the point. */
const WRAP = 56;

function renderShown(shown: ShownConfig): string {
  const rows: string[][] = [];
  for (const [key, s] of Object.entries(shown.settings)) {
    const [first = '', ...rest] = wrap(display(key, s));
    rows.push([key, first, s.source, s.from ?? '']);
    for (const more of rest) rows.push(['', more, '', '']);
  }
  const head = `config file: ${shown.file ?? 'none (looked for <data dir>/warren.config.json, .yaml, .yml)'}\n\n`;
  return head + renderTable(['KEY', 'VALUE', 'SOURCE', 'FROM'], rows, { maxCell: 200 });
}

function display(key: string, s: ShownSetting): string {
  const v = s.value;
  if (v === null) {
    const k = CONFIG_KEYS.find((c) => c.path === key);
    if (k?.unset) return k.unset;
    if (k?.kind === 'days') return 'never';
    if (k?.kind === 'seconds') return 'none';
    return '(not set)';
  }
  if (Array.isArray(v)) return v.length ? v.join(', ') : '(none)';
  if (typeof v === 'object') {
    const pairs = Object.entries(v as Record<string, unknown>);
    // Nested settings (a plugin's, a model's price) as JSON, not "[object Object]".
    const text = (n: unknown) => (n !== null && typeof n === 'object' ? JSON.stringify(n) : String(n));
    return pairs.length ? pairs.map(([k, n]) => `${k}=${text(n)}`).join(', ') : '(none)';
  }
  return String(v);
}

function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > WRAP) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines;
}
