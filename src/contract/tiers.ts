/** Depth tiers: what a session may call by default, before grants narrow it. */
export const TIERS = ['root', 'orchestrator', 'agent', 'worker'] as const;
export type Tier = (typeof TIERS)[number];

export const tierOf = (depth: number): Tier => TIERS[Math.min(Math.max(depth, 0), 3)]!;
