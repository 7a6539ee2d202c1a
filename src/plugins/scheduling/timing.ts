import { Cron } from 'croner';
import { WarrenError } from '../../vocab/errors.ts';
import type { ScheduleKind } from './schema.ts';

/** When a schedule fires: a cron expression in a time zone, a fixed interval, or one time. */
export interface Timing {
  kind: ScheduleKind;
  cron: string | null;
  tz: string | null;
  intervalMs: number | null;
  at: number | null;
}

const invalid = (field: string, message: string) =>
  new WarrenError('invalid_input', `${field}: ${message}`, { field });

/** An IANA time zone the runtime knows, or a typed error naming `tz`. */
export function checkTimeZone(tz: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz;
  } catch {
    throw invalid('tz', `unknown time zone ${JSON.stringify(tz)} (an IANA name, e.g. Europe/Paris)`);
  }
}

/**
 * The parsed expression (croner does the parsing). Only 5 fields (minute precision) or 6
 * (seconds first): croner's 7th field (year) is not part of the contract.
 */
export function cronOf(expr: string, tz: string): Cron {
  const fields = expr.trim().split(/\s+/);
  if (!expr.trim().startsWith('@') && fields.length !== 5 && fields.length !== 6) {
    throw invalid('cron', `${JSON.stringify(expr)} has ${fields.length} fields; 5 or 6 are accepted`);
  }
  try {
    return new Cron(expr, { timezone: tz, paused: true });
  } catch (error) {
    throw invalid('cron', `${JSON.stringify(expr)} is not a cron expression: ${(error as Error).message}`);
  }
}

/** Checks a timing as given; throws a typed error naming the bad field. */
export function checkTiming(t: Timing): void {
  if (t.kind === 'cron') {
    const tz = checkTimeZone(t.tz ?? 'UTC');
    if (cronOf(t.cron ?? '', tz).nextRun(new Date()) === null)
      throw invalid('cron', `${JSON.stringify(t.cron)} never fires`);
  }
}

/** The first time strictly after `after` this timing fires, or null (a one-shot already due). */
export function nextAfter(t: Timing, after: number): number | null {
  switch (t.kind) {
    case 'cron': {
      const next = cronOf(t.cron ?? '', t.tz ?? 'UTC').nextRun(new Date(after));
      return next ? next.getTime() : null;
    }
    case 'interval':
      return after + (t.intervalMs ?? 1);
    case 'once':
      return t.at !== null && t.at > after ? t.at : null;
  }
}
