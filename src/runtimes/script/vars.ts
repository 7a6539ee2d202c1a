/**
 * `${name.path}` inside a string is replaced by the value's text; a string that is exactly
 * `$name.path` is replaced by the value itself (so `fd: $worker.pipeFd` stays a number).
 */
export function interpolate<T>(value: T, vars: Record<string, unknown>): T {
  if (typeof value === 'string') {
    const whole = /^\$([a-zA-Z_][\w.]*)$/.exec(value);
    if (whole) return lookup(vars, whole[1]!) as T;
    return value.replace(/\$\{([a-zA-Z_][\w.]*)\}/g, (_, path: string) => {
      const v = lookup(vars, path);
      return typeof v === 'string' ? v : JSON.stringify(v);
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, vars)) as T;
  if (value && typeof value === 'object') {
    // Nested scripts are left alone: their variables are their own.
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === 'script' ? v : interpolate(v, vars)]),
    ) as T;
  }
  return value;
}

function lookup(vars: Record<string, unknown>, path: string): unknown {
  let cur: unknown = vars;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(part in cur)) {
      throw new Error(`unknown variable $${path}`);
    }
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
