/**
 * Two builds in one run: `npx tsx bench/compare.ts --base <checkout> quick` runs every bench
 * named (as `npm run bench` takes them) in the base checkout and in this one, one bench at a
 * time, alternating which goes first, and prints each row of both beside the cost ratio. Each
 * side runs its own `bench/run.ts` against its own sources and `dist/` (build both first), so
 * the base is whatever that commit measured; a row only one side has is shown with a dash.
 *
 * `--rounds N` runs every bench N times a side (alternating). Each row shows each side's median
 * and the paired cost: round by round now against base (they ran back to back), the median of
 * those and an interval for it (lib/paired.ts); a row is marked slower only when that median is
 * over 5 % and the interval lies above 1, and unsure when the rounds disagree.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { arch, cpus, loadavg, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type PairedCost, pairedCost, verdict } from './lib/paired.ts';
import { select } from './lib/registry.ts';
import { percentile } from './lib/stats.ts';

/** One row of `formatRows`' table, read back from a run's stdout. */
export interface TableRow {
  name: string;
  value: number;
  unit: string;
  /** The row's own same-run floor, and its value / floor. */
  ratio?: number;
  /** `>=`: more is better; `<=` or none: less is. */
  goal: string;
}

/**
 * Rows of the table `formatRows` prints: columns are where the dashes under the header are, so
 * names with spaces read back whole. Lines after the table (the machine, the summary) are not rows.
 */
export function parseTable(stdout: string): TableRow[] {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith('benchmark '));
  const dashes = lines[at + 1];
  if (at < 0 || !dashes) return [];
  const starts = [...dashes.matchAll(/-+/g)].map((m) => m.index);
  const cell = (line: string, i: number) => line.slice(starts[i], starts[i + 1] ?? line.length).trim();
  const num = (text: string) => (text === '' || text === '-' ? Number.NaN : Number(text.replaceAll(',', '')));
  const rows: TableRow[] = [];
  for (const line of lines.slice(at + 2)) {
    if (line.trim() === '') break;
    const ratio = num(cell(line, 4));
    rows.push({
      name: cell(line, 0),
      value: num(cell(line, 1)),
      unit: cell(line, 2),
      ...(Number.isNaN(ratio) ? {} : { ratio }),
      goal: cell(line, 5),
    });
  }
  return rows;
}

/** More is better: a throughput (`…/s`), or a row whose goal is a minimum. */
export const moreIsBetter = (r: Pick<TableRow, 'unit' | 'goal'>) =>
  r.unit.endsWith('/s') || r.goal.startsWith('>=');

/** How much more `now` costs than `base` (> 1: slower), by the row's direction. */
export function costRatio(base: number, now: number, row: Pick<TableRow, 'unit' | 'goal'>): number {
  return moreIsBetter(row) ? base / now : now / base;
}

/** The middle of the samples that ran (a row that failed in one round is NaN there). */
const median = (xs: readonly number[]): number =>
  percentile(
    xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b),
    0.5,
  );

/**
 * Runs `bench/run.ts <bench>` in `checkout`; its table's rows (none when the bench failed to
 * start). The child is in `running` while it runs.
 */
function runIn(
  checkout: string,
  bench: string,
  running: Set<ChildProcess>,
): Promise<{ rows: TableRow[]; failed: string | null }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', bench], {
      cwd: checkout,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    child.once('error', fail);
    child.once('exit', (code) => {
      const rows = parseTable(out);
      done({
        rows,
        failed: code === 0 ? null : err.trim().split('\n').slice(-3).join(' ') || `exit ${code}`,
      });
    });
  });
}

const fmt = (n: number | undefined, digits = 3) =>
  n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits });

const USAGE = [
  'usage: npx tsx bench/compare.ts --base <checkout> [--rounds N] <bench or group>…',
  '',
  'Runs each bench named (as `npm run bench` takes them: a name or a group such as `quick`) in',
  'the base checkout and in this one, alternating, and prints both sides with the cost ratio.',
  'Build both checkouts first (npm run build). --rounds N (5 or more for an interval that covers 90 %)',
  'runs each bench N times a side; rows show each side’s median and the paired cost with its interval.',
].join('\n');

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      base: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!values.base) throw new Error(`--base <checkout> is required\n${USAGE}`);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds: a whole number ≥ 1, not ${values.rounds}`);
  const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const base = resolve(values.base);
  for (const dir of [here, base]) {
    if (!existsSync(join(dir, 'dist', 'main.js')))
      throw new Error(`${dir} is not built: run npm run build there`);
  }
  const names = select(positionals).map(([name]) => name);
  const loadAtStart = loadText();
  const t0 = performance.now();
  // Indexed by round (NaN where the row did not come out), so round r pairs with round r.
  type Side = Map<string, { row: TableRow; values: number[]; ratios: number[] }>;
  const sides: Record<'base' | 'here', Side> = { base: new Map(), here: new Map() };
  const order: string[] = [];
  const failures: string[] = [];
  let turn = 0;
  const running = new Set<ChildProcess>();
  // Stopped early (a time limit, ^C): what was measured is printed, not lost, and the bench
  // that was running is ended with it.
  const interrupted = () => {
    for (const child of running) child.kill('SIGTERM');
    console.log(`interrupted: the ${order.length} rows measured so far\n`);
    report();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  for (const name of names) {
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first, so neither always runs in the other's wake.
      const pair = turn++ % 2 === 0 ? (['base', 'here'] as const) : (['here', 'base'] as const);
      for (const side of pair) {
        process.stderr.write(`compare: ${name} (${side}, round ${r + 1}/${rounds}, load ${loadText()})\n`);
        const { rows, failed } = await runIn(side === 'base' ? base : here, name, running);
        if (failed) failures.push(`${side} ${name}: ${failed}`);
        for (const row of rows) {
          if (!order.includes(row.name)) order.push(row.name);
          const seen = sides[side].get(row.name) ?? {
            row,
            values: new Array<number>(rounds).fill(Number.NaN),
            ratios: new Array<number>(rounds).fill(Number.NaN),
          };
          seen.values[r] = row.value;
          if (row.ratio !== undefined) seen.ratios[r] = row.ratio;
          sides[side].set(row.name, seen);
        }
      }
    }
  }
  report();
  process.off('SIGINT', interrupted);
  process.off('SIGTERM', interrupted);
  if (failures.length > 0) process.exitCode = 1;

  function report(): void {
    const head = [
      'benchmark',
      'unit',
      'base',
      'base ratio',
      'now',
      'now ratio',
      'cost',
      'cost (ratios)',
      'paired cost [interval]',
      '',
    ];
    const verdicts = { slower: 0, unsure: 0 };
    // The most pairs any row has (fewer than --rounds when the run was stopped early), and the
    // coverage of that row's interval.
    let pairs = 0;
    let coverage = 0;
    const cells = order.map((name) => {
      const b = sides.base.get(name);
      const h = sides.here.get(name);
      const row = (h ?? b)!.row;
      const bv = b ? median(b.values) : Number.NaN;
      const hv = h ? median(h.values) : Number.NaN;
      const br = b?.ratios.some((x) => !Number.isNaN(x)) ? median(b.ratios) : undefined;
      const hr = h?.ratios.some((x) => !Number.isNaN(x)) ? median(h.ratios) : undefined;
      const cost = costRatio(bv, hv, row);
      const costOfRatios = br !== undefined && hr !== undefined ? costRatio(br, hr, row) : undefined;
      const by = (bx: number, hx: number) => costRatio(bx, hx, row);
      const paired = b && h ? pairedCost(b.values, h.values, by) : undefined;
      if (paired && paired.n > pairs) ({ n: pairs, coverage } = paired);
      // A row with a same-run floor must be slower by that too: a slow moment of the machine
      // moves the row and its floor together.
      const pairedRatios =
        b && h && br !== undefined && hr !== undefined ? pairedCost(b.ratios, h.ratios, by) : undefined;
      const said = paired ? verdict(paired) : 'ok';
      const byFloor = pairedRatios ? verdict(pairedRatios) : said;
      const flag =
        said === 'ok' || byFloor === 'ok'
          ? ''
          : said === 'slower' && byFloor === 'slower'
            ? '> 5 %'
            : 'unsure';
      if (flag === '> 5 %') verdicts.slower++;
      else if (flag === 'unsure') verdicts.unsure++;
      return [
        name,
        row.unit,
        fmt(bv),
        fmt(br),
        fmt(hv),
        fmt(hr),
        fmt(cost),
        fmt(costOfRatios),
        interval(paired),
        flag,
      ];
    });
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (c: string[]) =>
      c
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd();
    console.log([line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n'));
    console.log('');
    const cpu = cpus();
    console.log(
      `base ${base}, now ${here}; ${rounds} round(s) a side, alternating; node ${process.version}, ${platform()}/${arch()}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'})`,
    );
    console.log(
      `load average at start ${loadAtStart}, at end ${loadText()}; ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
    console.log(
      'cost: now / base (base / now where more is better), > 1 is slower; cost (ratios): the same of each row’s own same-run ratio',
    );
    console.log(
      `paired cost: the median of the rounds' costs (round r of each side ran back to back) [the interval that holds the true median with the chance shown in the footnote below]; > 5 %: that median is over 1.05 and the interval lies above 1, by value and, where the row has one, by its same-run ratio; unsure: over 1.05 but some rounds were no slower`,
    );
    console.log(
      pairs === 0
        ? 'interval: no round has run on both sides yet'
        : `interval: from ${pairs} pairs, it holds the true median with a ${(coverage * 100).toFixed(1)} % chance (order statistics; 5 or more rounds reach 90 %); rows over 5 %: ${verdicts.slower}, unsure: ${verdicts.unsure}`,
    );
    for (const f of failures) console.log(`FAILED ${f}`);
  }
}

/** `1.012 [0.97–1.08]`: the paired cost and its interval. */
function interval(c: PairedCost | undefined): string {
  if (!c || c.n === 0) return '-';
  return `${fmt(c.median)} [${fmt(c.low, 2)}–${fmt(c.high, 2)}]`;
}

function loadText(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

// Bad input (and a checkout that is not built) says so in a line, not a stack.
if (import.meta.url === `file://${process.argv[1]}`)
  await main().catch((error: unknown) => {
    process.stderr.write(`compare: ${(error as Error).message}\n`);
    process.exitCode = 2;
  });
