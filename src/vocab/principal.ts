/** Who is calling. Operators act from outside; sessions act as themselves. */
export type Principal =
  | { kind: 'operator'; name: string; zone: string }
  | {
      kind: 'session';
      sessionId: string;
      zone: string;
      depth: number;
      /** The tools it may call (fixed at spawn); absent means its tier's defaults. */
      tools?: readonly string[];
    };

/** The value stored in `fds.holder` / `streams.owner` / `events.actor` for a principal. */
export const principalId = (p: Principal): string =>
  p.kind === 'operator' ? `operator:${p.name}` : p.sessionId;

export const isOperatorId = (holder: string) => holder.startsWith('operator:');

export const KERNEL_ACTOR = 'kernel';
export const INIT_SESSION = 'init';
export const DEFAULT_ZONE = 'default';

export const operator = (name = 'admin', zone = DEFAULT_ZONE): Principal => ({
  kind: 'operator',
  name,
  zone,
});
