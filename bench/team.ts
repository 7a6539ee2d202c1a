/**
 * The team bench (`npm run bench -- team`): the real Claude Code CLI as a lead task's
 * session against the scripted mock Anthropic API, a DAG of four tasks done by claude-code
 * workers, one escalation answered by the operator through `warren inbox answer`, one failure
 * the lead retries (test/orchestration/team-scenario.ts). Per session: model requests and
 * input tokens (JSON characters of the whole request / 4, as the mock's `count_tokens`
 * counts); the lead's wake-ups against its tasks' outcomes; turns spent on `[SIGTERM]`;
 * whether the operator's decision reached the dependents — beside the baseline recorded once
 * on a9821d8, the code before issue 24 (bench/baselines/team-a9821d8.json). Under the
 * scripted mock these figures are deterministic, so the baseline is not re-measured.
 *
 * `npx tsx bench/team.ts` prints the rows; `npx tsx bench/team.ts --record` also writes
 * bench/baselines/team-a9821d8.json (refused unless src/, bin/ and package.json are a9821d8's).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { measure, type TeamFigures } from '../test/orchestration/team-measure.ts';
import { runTeam } from '../test/orchestration/team-scenario.ts';
import type { BenchRow } from './store.ts';

export const BASELINE_COMMIT = 'a9821d8';
const baselineFile = (commit: string) =>
  fileURLToPath(new URL(`./baselines/team-${commit}.json`, import.meta.url));

/** The goal for the whole team's input tokens, as a share of the baseline. */
const TOKEN_SHARE = 0.35;

export interface TeamBaseline {
  commit: string;
  recorded: string;
  how: string;
  tokens: string;
  ms: number;
  figures: TeamFigures;
}

function loadBaseline(): TeamBaseline | null {
  const file = baselineFile(BASELINE_COMMIT);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as TeamBaseline) : null;
}

export function teamRows(now: TeamFigures, base: TeamFigures | null): BenchRow[] {
  const rows: BenchRow[] = [];
  const vs = (value: number, baseline: number | undefined) =>
    baseline === undefined
      ? {}
      : { baseline, ...(baseline > 0 ? { ratio: Number((value / baseline).toFixed(2)) } : {}) };
  for (const s of now.sessions) {
    const b = base?.sessions.find((x) => x.name === s.name);
    rows.push({
      name: `team: ${s.name}, input tokens`,
      value: s.inputTokens,
      unit: 'tokens',
      ...vs(s.inputTokens, b?.inputTokens),
      note: `${s.requests} model requests${b ? ` (baseline ${b.requests})` : ''}; ${s.sigtermTurns} on [SIGTERM]${b ? ` (baseline ${b.sigtermTurns})` : ''}`,
    });
  }
  for (const b of base?.sessions ?? [])
    if (!now.sessions.some((s) => s.name === b.name))
      rows.push({
        name: `team: ${b.name}, input tokens`,
        value: 0,
        unit: 'tokens',
        baseline: b.inputTokens,
        ratio: 0,
        note: `no such session now; baseline ${b.requests} model requests`,
      });
  const bt = base?.totals;
  rows.push({
    name: 'team: input tokens, whole team',
    value: now.totals.inputTokens,
    unit: 'tokens',
    ...vs(now.totals.inputTokens, bt?.inputTokens),
    ...(bt ? { max: Math.floor(bt.inputTokens * TOKEN_SHARE) } : {}),
    note: `goal: <= ${TOKEN_SHARE * 100} % of the baseline (a9821d8, recorded); JSON characters of each request / 4; warren's tools ${share(now.totals.warrenToolTokens, now.totals.inputTokens)}, claude's own tools ${share(now.totals.otherToolTokens, now.totals.inputTokens)}`,
  });
  rows.push({
    name: 'team: model requests, whole team',
    value: now.totals.requests,
    unit: 'requests',
    ...vs(now.totals.requests, bt?.requests),
  });
  rows.push({
    name: 'team: lead wake-ups (inputs to its session)',
    value: now.lead.wakeUps,
    unit: 'inputs',
    ...(base ? { baseline: base.lead.wakeUps } : {}),
    max: now.lead.outcomes,
    note: `goal: one per task outcome, an escalation (waiting) counting one: ${now.lead.outcomes} outcomes${base ? `; baseline ${base.lead.wakeUps} inputs for ${base.lead.outcomes}` : ''}`,
  });
  rows.push({
    name: 'team: model turns on [SIGTERM]',
    value: now.totals.sigtermTurns,
    unit: 'requests',
    ...(bt ? { baseline: bt.sigtermTurns } : {}),
    max: 0,
  });
  rows.push({
    name: "team: dependents given the operator's decision",
    value: now.decisionReached.length,
    unit: 'of 2',
    ...(base ? { baseline: base.decisionReached.length } : {}),
    goal: 2,
    note: `C and D, in their first model request: ${now.decisionReached.join(', ') || 'none'}; the operator's answer: ${now.answer}${base ? `; baseline: ${base.answer}` : ''}`,
  });
  return rows;
}

const share = (part: number, whole: number) => `${Math.round((100 * part) / Math.max(1, whole))} %`;

/** The per-session table, beside the baseline. */
export function sessionTable(now: TeamFigures, base: TeamFigures | null): string {
  const names = [
    ...new Set([...now.sessions.map((s) => s.name), ...(base?.sessions ?? []).map((s) => s.name)]),
  ];
  type Key = 'requests' | 'inputTokens' | 'warrenToolTokens' | 'otherToolTokens' | 'sigtermTurns';
  const n = (v: number | undefined) => (v === undefined ? '-' : v.toLocaleString('en-US'));
  const pair = (k: Key, get: (f: TeamFigures | null) => Partial<Record<Key, number>> | undefined) => [
    n(get(now)?.[k]),
    n(get(base)?.[k]),
  ];
  const keys: Key[] = ['requests', 'inputTokens', 'warrenToolTokens', 'otherToolTokens', 'sigtermTurns'];
  const rows = names.map((name) => [
    name,
    ...keys.flatMap((k) => pair(k, (f) => f?.sessions.find((x) => x.name === name))),
  ]);
  rows.push(['total', ...keys.flatMap((k) => pair(k, (f) => f?.totals))]);
  const head = [
    'session',
    'requests',
    'baseline',
    'input tokens',
    'baseline',
    'warren tools',
    'baseline',
    "claude's tools",
    'baseline',
    '[SIGTERM] turns',
    'baseline',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((v, i) => v.padEnd(widths[i]!)).join('  ');
  return [
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `lead wake-ups: ${now.lead.wakeUps} for ${now.lead.outcomes} task outcomes` +
      (base ? ` (baseline ${base.lead.wakeUps} for ${base.lead.outcomes})` : ''),
    `dependents given the decision: ${now.decisionReached.join(', ') || 'none'}` +
      (base ? ` (baseline ${base.decisionReached.join(', ') || 'none'})` : ''),
  ].join('\n');
}

async function teamBench(): Promise<BenchRow[]> {
  const run = await runTeam({ log: (l) => process.stderr.write(`team: ${l}\n`) });
  const now = measure(run);
  const base = loadBaseline()?.figures ?? null;
  process.stdout.write(
    `\nteam bench, per session (baseline: ${BASELINE_COMMIT}, recorded)\n${sessionTable(now, base)}\n\n`,
  );
  return teamRows(now, base);
}

export const teamBenches = { teamBench };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const run = await runTeam({ log: (l) => process.stderr.write(`team: ${l}\n`) });
  const now = measure(run);
  if (process.argv.includes('--record')) {
    // The baseline is warren's code at BASELINE_COMMIT: the bench's own files may be newer.
    const head = execFileSync('git', ['rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync(
      'git',
      ['diff', '--name-only', BASELINE_COMMIT, '--', 'src', 'bin', 'package.json'],
      {
        encoding: 'utf8',
      },
    ).trim();
    if (changed) throw new Error(`--record needs warren's code of ${BASELINE_COMMIT}; changed: ${changed}`);
    const record: TeamBaseline = {
      commit: BASELINE_COMMIT,
      recorded: new Date().toISOString(),
      how: `npx tsx bench/team.ts --record at ${head} (src/, bin/ and package.json as at ${BASELINE_COMMIT}): the scenario of test/orchestration/team-scenario.ts and team-script.ts, the real claude CLI ${claudeVersion()} against the scripted mock`,
      tokens:
        'JSON characters of the whole request body / 4, rounded up, per request (as the mock answers count_tokens)',
      ms: run.ms,
      figures: now,
    };
    writeFileSync(baselineFile(BASELINE_COMMIT), `${JSON.stringify(record, null, 2)}\n`);
    process.stderr.write(`team: baseline written to ${baselineFile(BASELINE_COMMIT)}\n`);
  }
  const base = loadBaseline()?.figures ?? null;
  console.log(sessionTable(now, base));
  console.log('');
  console.log(formatRows(teamRows(now, base)));
}

function claudeVersion(): string {
  const pkg = fileURLToPath(
    new URL('../node_modules/@anthropic-ai/claude-code/package.json', import.meta.url),
  );
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}
