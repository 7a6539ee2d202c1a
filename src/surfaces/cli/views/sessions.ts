import { renderKeyValues, renderTable } from '../table.ts';
import { compactJson, iso, list, plural, type Session, text, type View, view } from './format.ts';

/** Process control: ps, spawn, kill, send, suspend, resume. */

/** Why it stopped or is suspended, in a few words (the full text is in `session show`). */
const reasonOf = (s: Session): string => {
  if (s.endReason) return s.endDetail ? `${s.endReason}: ${clip(s.endDetail, 60)}` : s.endReason;
  return s.status === 'suspended' ? (s.suspendReason ?? '') : '';
};

/** Its status, and what it is doing when that says more ("running — retrying model API, attempt 3/10"). */
const statusOf = (s: Session): string => (s.activity ? `${s.status} — ${s.activity}` : s.status);

const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

const ps = view<{ sessions: Session[] }>((out, ctx) =>
  renderTable(
    ['ID', 'Title', 'Status', 'Reason/End', 'Parent', 'Depth', 'Runtime', 'Last message'],
    out.sessions.map((s) => [
      s.id,
      s.title ?? '',
      statusOf(s),
      [reasonOf(s), s.endedAt ? iso(s.endedAt) : ''].filter(Boolean).join(' '),
      s.parentId ?? '',
      String(s.depth),
      s.runtime,
      s.lastMessage ?? '',
    ]),
    { ...ctx, empty: 'no sessions' },
  ),
);

export const sessionDetails = (s: Session, width?: number): string =>
  renderKeyValues(
    [
      ['id', s.id],
      ['title', text(s.title)],
      ['status', s.status],
      ['activity', text(s.activity)],
      ['end reason', text(s.endReason)],
      ['end detail', text(s.endDetail)],
      ['suspend reason', text(s.suspendReason)],
      ['parent', text(s.parentId)],
      ['depth', String(s.depth)],
      ['zone', s.zone],
      ['runtime', s.runtime],
      ['persona', text(s.persona)],
      ['model', text(s.model)],
      ['max turns', text(s.maxTurns)],
      ['tools', s.tools ? s.tools.join(', ') : "(its tier's)"],
      ['runner', s.runner],
      ...(s.containment !== undefined
        ? [['containment', containmentText(s.containment)] as [string, string]]
        : []),
      ['parent close', s.parentClose],
      ['turns', String(s.turns)],
      ['usage', compactJson(s.usage)],
      ['subtree usage', compactJson(s.subtreeUsage)],
      ...budgetRows(s),
      ['created', iso(s.createdAt)],
      ['updated', iso(s.updatedAt)],
      ['ended', iso(s.endedAt)],
      ['last message', text(s.lastMessage)],
    ],
    width ? { width } : {},
  );

/** Only for a session with a budget. */
const budgetRows = (s: Session): [string, string][] =>
  s.budget
    ? [
        ['budget', compactJson(s.budget.limits)],
        ['budget left', compactJson(s.budget.remaining)],
        ...(s.budget.deadline !== null
          ? [['budget deadline', iso(s.budget.deadline)] as [string, string]]
          : []),
        ...(s.budget.exceeded
          ? [['budget exceeded', compactJson(s.budget.exceeded)] as [string, string]]
          : []),
      ]
    : [];

const sessionShow = view<{ session: Session }>((out, ctx) => sessionDetails(out.session, ctx.width));

const spawn = view<{ session: Session; lifecycleFd: number; pipeFd: number; created: boolean }>(
  (out) =>
    `${out.created ? 'spawned' : 'already spawned (same idempotency key)'} ${out.session.id}` +
    ` — status ${out.session.status}, lifecycle fd ${out.lifecycleFd}, pipe fd ${out.pipeFd}\n`,
);

const kill = view<{ id: string; signal: string; deadline: number | null }>((out) =>
  out.signal === 'SIGTERM' && out.deadline
    ? `SIGTERM sent to ${out.id}; SIGKILL at ${iso(out.deadline)} if it has not stopped\n`
    : `${out.signal} sent to ${out.id}\n`,
);

const send = view<{ seq: number }>((out) => `sent (seq ${out.seq})\n`);

const suspend = view<{ sessions: string[] }>(
  (out) => `SIGSTOP: suspended ${plural(out.sessions.length, 'session')}: ${list(out.sessions)}\n`,
);

const resume = view<{ session: Session; continued: string[] }>(
  (out) =>
    `resumed ${out.session.id} — status ${out.session.status}` +
    (out.continued.length ? `; SIGCONT: ${list(out.continued)}` : '') +
    '\n',
);

export const sessionViews: Record<string, View> = {
  ps,
  session_show: sessionShow,
  ipc_spawn: spawn,
  kill,
  send,
  suspend,
  resume,
};

/** `bwrap (network none)`, `none`, … ; `-` for a session from before it was recorded. */
function containmentText(c: Session['containment']): string {
  if (!c) return '-';
  return c.network ? `${c.mode} (network ${c.network})` : c.mode;
}
