import { type Context, createContext, Script } from 'node:vm';

const TEST = new Script('new RegExp(pattern).test(input)');

/**
 * Runs `wait.match` patterns, which come from the request, under a time bound: in a vm
 * context (made once per agent) with a timeout, so a backtracking pattern such as `(a+)+$`
 * is cut off instead of freezing the server. Inputs are matched on their first
 * `maxInput` characters. The context is made on the first match: a V8 context costs ~150 KiB,
 * and most agents never match (10,000 idle agents would hold 1.5 GiB of them).
 */
export class BoundedMatcher {
  private context: Context | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly maxInput: number,
  ) {}

  /** Whether `input` matches; 'timeout' when the pattern ran out of time (no match). */
  test(pattern: string, input: string): boolean | 'timeout' {
    this.context ??= createContext({ pattern: '', input: '' });
    this.context.pattern = pattern;
    this.context.input = input.length > this.maxInput ? input.slice(0, this.maxInput) : input;
    try {
      return TEST.runInContext(this.context, { timeout: this.timeoutMs }) === true;
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
      throw error;
    } finally {
      if (this.context) this.context.input = ''; // do not keep the last input alive
    }
  }
}
