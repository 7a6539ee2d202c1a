import type { WallTimers } from './breach.ts';
import type { Core } from './core.ts';
import type { Delivery } from './delivery.ts';
import type { ModelGateway } from './gateway/gateway.ts';
import type { Supervisor } from './supervisor.ts';
import type { TermTimers } from './term.ts';

/**
 * What the kernel's operations (proc.ts, file.ts, rooms.ts, …) work with: the shared core
 * plus this node's moving parts. One per kernel, built by the Kernel object.
 */
export interface KernelContext extends Core {
  delivery: Delivery;
  supervisor: Supervisor;
  term: TermTimers;
  wall: WallTimers;
  gateway: ModelGateway;
}
