/**
 * Where warren's own diagnostics go: an injected logger (a server passes its pino instance;
 * pino's loggers fit this shape), never a global one. Without one, the text goes to stderr
 * as it always did, so a library user or a test still sees failures.
 */
export interface Log {
  error(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

const line = (obj: Record<string, unknown>, msg: string): string => {
  const err = obj.err;
  const why = err instanceof Error ? err.message : err === undefined ? '' : String(err);
  return `warren: ${msg}${why ? `: ${why}` : ''}`;
};

/** The default: errors and warnings as one plain line on stderr (console.error); nothing below. */
export const stderrLog: Log = {
  error: (obj, msg) => console.error(line(obj, msg)),
  warn: (obj, msg) => console.error(line(obj, msg)),
  info: () => {},
  debug: () => {},
};

/** Logs nothing (tests that provoke failures on purpose). */
export const silentLog: Log = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
