/**
 * The clock rules of a node's lease (docs/scaling.md, "Fencing on the node's own clock"), all
 * derived from the lease L. A renewal counts from when it was *sent* (the node's clock), never
 * from when its answer came, so the node's view of its lease is never longer than the one the
 * database holds (`lease_until` = send time + L).
 *
 *   margin M           = max(10 % of L, 250 ms), at most L / 2
 *   the node fences at   last successful renewal sent + L − M   (its own watchdog)
 *   its agents' watchers end them at   that + M / 2            (lifeline.ts: even while paused)
 *   the others take over only when lease_until + M has passed     (send time + L + M)
 *   renewals every       min(heartbeatMs, L / 4)
 *   each lease call's deadline: half the time left before the node must fence, at least a
 *   quarter of L − M; while fenced, half of L − M.
 *
 * So between the node ending its agents and any other node taking their sessions there are
 * 2M (600 ms at the tests' 3 s lease, 2 s at the default 10 s), which must cover the drift
 * between the nodes' clocks over one lease and the time to end the agents. A paused node ends
 * nothing itself: its agents' watchers do, M / 2 after the node would have fenced (so a
 * running node's own fence comes first and records no exit), 1.5M before any takeover. A renewal is tried
 * about (L − M) / (L / 4) ≈ 3–4 times before the node fences, each with a generous deadline,
 * so one slow round trip on a loaded machine does not fence a healthy node.
 */

/** The safety margin M on each side of the lease. */
export const leaseMarginMs = (leaseMs: number): number =>
  Math.min(Math.floor(leaseMs / 2), Math.max(250, Math.floor(leaseMs / 10)));

/** How long after its last successful renewal was sent a node fences itself: L − M. */
export const fenceAfterMs = (leaseMs: number): number => leaseMs - leaseMarginMs(leaseMs);

/**
 * How long after its last successful renewal was sent a node's agents' lifeline watchers end
 * them unless beaten again: L − M / 2, between the node's own fence and any takeover.
 */
export const lifelineAfterMs = (leaseMs: number): number =>
  fenceAfterMs(leaseMs) + Math.floor(leaseMarginMs(leaseMs) / 2);

/** How long past a node's `lease_until` the others wait before they take its sessions: M. */
export const takeoverGraceMs = (leaseMs: number): number => leaseMarginMs(leaseMs);

/** How often a node renews: its heartbeat, but at least four times a lease. */
export const renewEveryMs = (leaseMs: number, heartbeatMs: number): number =>
  Math.max(1, Math.min(heartbeatMs, Math.floor(leaseMs / 4)));

/**
 * The deadline of one lease call made `toFenceMs` before the node would fence (≤ 0: it is
 * fenced already): half of that, so a call that hangs leaves time for another on a fresh
 * connection, but never less than a quarter of L − M (a round trip on a loaded machine); half
 * of L − M while fenced, when nothing is gained by hurrying.
 */
export const leaseCallMs = (leaseMs: number, toFenceMs: number): number => {
  const window = fenceAfterMs(leaseMs);
  if (toFenceMs <= 0) return Math.floor(window / 2);
  return Math.max(Math.floor(window / 4), Math.floor(toFenceMs / 2));
};

/** The longest any lease call may take (the server's `statement_timeout` for them). */
export const leaseCallMaxMs = (leaseMs: number): number => Math.floor(fenceAfterMs(leaseMs) / 2);
