/** What a script may cost: everything in it comes from a request, so all of it is capped. */
export interface ScriptLimits {
  /** Directories `config.file` may name a file under (canonicalized; symlinks cannot leave them). */
  roots: readonly string[];
  /** A script file larger than this is refused before it is read. */
  maxFileBytes: number;
  /** An inline script (text, or an object as JSON) larger than this is refused. */
  maxScriptBytes: number;
  maxSteps: number;
  /** The longest `wait.match` pattern. */
  maxPatternLength: number;
  /** Inputs longer than this are matched on their first this-many characters. */
  maxMatchInput: number;
  /** A `wait.match` test that runs longer than this counts as no match. */
  matchTimeoutMs: number;
  /**
   * The most one turn of the event loop spends running script steps (all agents' together,
   * taking turns) before it polls for I/O again (util/slice-gate.ts).
   */
  stepSliceMs: number;
}

export const DEFAULT_LIMITS: Omit<ScriptLimits, 'roots'> = {
  maxFileBytes: 1024 * 1024,
  maxScriptBytes: 256 * 1024,
  maxSteps: 1000,
  maxPatternLength: 1024,
  maxMatchInput: 64 * 1024,
  matchTimeoutMs: 100,
  stepSliceMs: 10,
};

export function scriptLimits(opts: Partial<ScriptLimits> = {}): ScriptLimits {
  return { ...DEFAULT_LIMITS, ...opts, roots: opts.roots ?? [process.cwd()] };
}
