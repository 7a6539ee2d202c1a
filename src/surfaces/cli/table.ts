import { visible } from './visible.ts';

/** A plain-text table: headers, aligned columns, long cells cut with …, fitted to the terminal when its width is known. */

export interface Row {
  cells: string[];
  /** Detail lines under the row, indented and aligned among themselves (a stream's subscribers). */
  sub?: string[][];
}

export interface TableOptions {
  /** Terminal width; without it only `maxCell` bounds a column. */
  width?: number;
  /** Widest a column may be before it is cut; default 60. */
  maxCell?: number;
  /** Printed instead of the table when there are no rows. */
  empty?: string;
}

const GAP = '  ';
const INDENT = '    ';
const MIN_COLUMN = 4;

const len = (s: string): number => Array.from(s).length;

/** Newlines and tabs would break the grid; other control characters are shown as escapes. */
export const clean = (s: string): string => visible(s.replace(/[\r\n\t\v\f]+/g, ' '));

export function truncate(s: string, width: number): string {
  const chars = Array.from(s);
  if (chars.length <= width) return s;
  if (width <= 1) return '…'.slice(0, width);
  return chars.slice(0, width - 1).join('') + '…';
}

const pad = (s: string, width: number): string => s + ' '.repeat(Math.max(0, width - len(s)));

export function renderTable(headers: string[], rows: (string[] | Row)[], opts: TableOptions = {}): string {
  if (rows.length === 0 && opts.empty !== undefined) return `${opts.empty}\n`;
  const maxCell = opts.maxCell ?? 60;
  const normal = rows.map((r) => (Array.isArray(r) ? { cells: r } : r));
  const grid = normal.map((r) => headers.map((_, i) => clean(r.cells[i] ?? '')));
  const widths = headers.map((h, i) =>
    Math.min(maxCell, Math.max(len(h), ...grid.map((cells) => len(cells[i]!)))),
  );
  if (opts.width) shrinkToFit(widths, opts.width);

  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(truncate(c, widths[i]!), widths[i]!))
      .join(GAP)
      .trimEnd();
  const subWidths = columnWidths(
    normal.flatMap((r) => r.sub ?? []).map((cells) => cells.map(clean)),
    maxCell,
  );
  const out = [line(headers)];
  normal.forEach((row, r) => {
    out.push(line(grid[r]!));
    for (const sub of row.sub ?? []) {
      const text =
        INDENT + sub.map((c, i) => pad(truncate(clean(c), subWidths[i]!), subWidths[i]!)).join(GAP);
      out.push(opts.width ? truncate(text.trimEnd(), opts.width) : text.trimEnd());
    }
  });
  return `${out.join('\n')}\n`;
}

function columnWidths(rows: string[][], maxCell: number): number[] {
  const widths: number[] = [];
  for (const cells of rows) {
    cells.forEach((c, i) => {
      widths[i] = Math.min(maxCell, Math.max(widths[i] ?? 0, len(c)));
    });
  }
  return widths;
}

/** Take from the widest column first: narrow columns (ids, numbers) stay readable. */
function shrinkToFit(widths: number[], width: number): void {
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1);
  while (total() > width) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= MIN_COLUMN) return;
    widths[widest]!--;
  }
}

/** `key  value` lines, keys aligned. */
export function renderKeyValues(pairs: [string, string][], opts: { width?: number } = {}): string {
  const keyWidth = Math.max(0, ...pairs.map(([k]) => len(k)));
  const lines = pairs.map(([k, v]) => {
    const text = `${pad(k, keyWidth)}${GAP}${clean(v)}`;
    return opts.width ? truncate(text, opts.width) : text;
  });
  return `${lines.join('\n')}\n`;
}
