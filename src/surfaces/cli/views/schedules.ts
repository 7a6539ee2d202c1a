import { renderKeyValues, renderTable } from '../table.ts';
import { compactJson, iso, text, type View, view } from './format.ts';
import { age } from './inbox.ts';

/**
 * Schedules (the scheduling plugin): tables and `key  value` details like every other
 * command, times as ISO 8601 (with how far off, in details) instead of epoch milliseconds.
 * `--json` still gives the syscall's output as it is.
 */

interface Schedule {
  id: string;
  name: string;
  kind: string;
  cron: string | null;
  tz: string | null;
  intervalMs: number | null;
  at: number | null;
  action: Record<string, unknown>;
  enabled: boolean;
  nextFireAt: number | null;
  missed: string;
  missedCap: number;
  overlap: string;
  createdBy: string;
  createdAt: number;
  fires: number;
  lastFireAt: number | null;
  lastOutcome: string | null;
}

interface Fire {
  id: string;
  dueAt: number;
  firedAt: number;
  manual: boolean;
  status: string;
  target: string | null;
  error: string | null;
  finishedAt: number | null;
  node: string | null;
}

const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

/** An interval exactly: `90s`, `5m`, `2h`, `1d` (the largest unit that divides it). */
const span = (ms: number): string => {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms} ms`;
};

/** `0 2 * * * (Europe/Paris)`, `every 5m`, `at 2026-…Z`. */
const timing = (s: Schedule): string => {
  if (s.cron !== null) return s.tz ? `${s.cron} (${s.tz})` : s.cron;
  if (s.intervalMs !== null) return `every ${span(s.intervalMs)}`;
  return s.at !== null ? `at ${iso(s.at)}` : s.kind;
};

/** What a fire does, in a few words: `{kind, task|spawn|stream}` as its kind and what it names. */
const actionOf = (a: Record<string, unknown>): string => {
  const kind = typeof a.kind === 'string' ? a.kind : '';
  const b = (a[kind] ?? {}) as Record<string, unknown>;
  const what = b.title ?? b.stream ?? b.personaId ?? b.prompt;
  return typeof what === 'string' ? `${kind} ${clip(what, 40)}` : kind;
};

/** `2026-11-29T02:00:00.000Z (in 8h)` / `(3m ago)`: when, and how far from now. */
export const when = (ms: number | null, now = Date.now()): string => {
  if (ms === null) return '';
  const d = ms - now;
  return `${iso(ms)} (${d >= 0 ? `in ${age(d)}` : `${age(-d)} ago`})`;
};

const scheduleList = view<{ schedules: Schedule[]; next: string | null }>((out, ctx) => {
  const table = renderTable(
    ['ID', 'Name', 'When', 'Action', 'State', 'Next fire', 'Last fire', 'Fires'],
    out.schedules.map((s) => [
      s.id,
      s.name,
      timing(s),
      actionOf(s.action),
      s.enabled ? 'enabled' : 'paused',
      iso(s.nextFireAt),
      s.lastFireAt === null ? '' : `${iso(s.lastFireAt)} ${s.lastOutcome ?? ''}`.trimEnd(),
      String(s.fires),
    ]),
    { ...ctx, empty: 'no schedules' },
  );
  return out.next ? `${table}next page: --after ${out.next}\n` : table;
});

const scheduleDetails = (s: Schedule, width?: number): string =>
  renderKeyValues(
    [
      ['id', s.id],
      ['name', s.name],
      ['kind', s.kind],
      ['when', timing(s)],
      ['state', s.enabled ? 'enabled' : 'paused'],
      ['next fire', when(s.nextFireAt)],
      [
        'last fire',
        s.lastFireAt === null ? 'never' : `${when(s.lastFireAt)} ${s.lastOutcome ?? ''}`.trimEnd(),
      ],
      ['fires', String(s.fires)],
      ['missed', s.missed === 'run-all' ? `run-all (at most ${s.missedCap})` : s.missed],
      ['overlap', s.overlap],
      ['action', compactJson(s.action)],
      ['created by', s.createdBy],
      ['created', iso(s.createdAt)],
    ],
    width ? { width } : {},
  );

const fireRows = (fires: Fire[]): string[][] =>
  fires.map((f) => [
    f.id,
    iso(f.dueAt),
    iso(f.firedAt),
    f.manual ? 'run-now' : '',
    f.status,
    text(f.target),
    iso(f.finishedAt),
    text(f.error),
  ]);
const FIRE_HEADERS = ['Fire', 'Due', 'Fired', 'Manual', 'Status', 'Target', 'Finished', 'Error'];

const scheduleOne = view<{ schedule: Schedule }>((out, ctx) => scheduleDetails(out.schedule, ctx.width));

const scheduleShow = view<{ schedule: Schedule; fires: Fire[] }>(
  (out, ctx) =>
    `${scheduleDetails(out.schedule, ctx.width)}\nfires\n${renderTable(FIRE_HEADERS, fireRows(out.fires), { ...ctx, empty: 'none yet' })}`,
);

const runNow = view<{ fire: Fire }>((out, ctx) => renderTable(FIRE_HEADERS, fireRows([out.fire]), ctx));

const deleted = view<{ deleted: string }>((out) => `deleted ${out.deleted}\n`);

export const scheduleViews: Record<string, View> = {
  schedule_list: scheduleList,
  schedule_show: scheduleShow,
  schedule_create: scheduleOne,
  schedule_update: scheduleOne,
  schedule_pause: scheduleOne,
  schedule_resume: scheduleOne,
  schedule_adopt: scheduleOne,
  schedule_run_now: runNow,
  schedule_delete: deleted,
};
