import type { IncomingHttpHeaders } from 'node:http';
import type { Provider } from '../../../kernel/gateway/upstreams.ts';
import type { UsageShape } from './usage.ts';

/**
 * What sets one provider's API at the gateway apart from another's (routes.ts serves them
 * all the same way): where it is mounted, which calls it offers, how its clients send their
 * credential, how its errors look, and where its answers carry their usage.
 */
export interface GatewayDialect {
  provider: Provider;
  /** Where the gateway serves it: `/v1/gateway/<provider>`. */
  prefix: string;
  /** What of a request's path is the gateway's own, before the provider's (its base URL's) path. */
  mount: string;
  /** The calls offered (anything else under the prefix is 404); `metered`: usage recorded, budgets held. */
  routes: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; metered: boolean }>;
  /** The credential the agent's CLI sends. */
  credential(headers: IncomingHttpHeaders): string | undefined;
  /** An error answer's body, in the shape the API (and so the agent's CLI) knows. */
  error(status: number, message: string): string;
  usage: UsageShape;
}
