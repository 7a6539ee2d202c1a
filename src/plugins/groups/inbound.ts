import type { PluginTables } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import { SliceGate } from '../../util/slice-gate.ts';
import { eachYielding } from '../../util/yielding.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { principalId } from '../../vocab/principal.ts';
import type { GroupAgents } from './agents.ts';
import { byOrder, type CompiledRoute } from './match.ts';
import { RouteIndex } from './route-index.ts';
import { compileRoute, zoneRoutes } from './routes.ts';
import type { GroupsDb, GroupUnroutedTable } from './schema.ts';

export interface InboundMessage {
  platform: string;
  room: string;
  chat_jid: string;
  sender: string;
  verb: string;
  text: string;
  attachments?: unknown[] | undefined;
}

export type InboundResult =
  | { routed: true; routeId: string; group: string; sessionId: string; how: string }
  | { routed: false; unroutedId: string; reason: string };

/**
 * The most route matching holds the event loop at once (a zone may hold thousands of routes):
 * per loop turn, all inbound messages together (`Inbound.gate`).
 */
const MATCH_SLICE_MS = 5;

const ROUTE_EVENTS = new Set(['group.route_added', 'group.routes_set', 'group.route_deleted']);

/**
 * Inbound messages: the first route of the zone (by seq) whose match holds delivers the
 * message to its target group's agent; the decision is logged either way. A message no
 * route takes, or whose group cannot take it, waits in the `unrouted` inbox.
 */
export class Inbound {
  /** Each zone's compiled routes; dropped when a route changes (on any node). */
  private readonly routes = new Map<string, Promise<RouteIndex<CompiledRoute>>>();
  /** Every message's matching takes turns here: many callers at once share one slice a loop turn. */
  private readonly gate = new SliceGate(MATCH_SLICE_MS);

  constructor(
    private readonly kernel: Kernel,
    private readonly tables: PluginTables<GroupsDb>,
    private readonly agents: GroupAgents,
  ) {}

  onCommit(events: readonly LogEvent[]): void {
    for (const e of events) if (ROUTE_EVENTS.has(e.type)) this.routes.delete(e.zone);
  }

  private compiled(zone: string): Promise<RouteIndex<CompiledRoute>> {
    let r = this.routes.get(zone);
    if (!r) {
      r = zoneRoutes(this.tables.reader, zone).then(async (rows) => {
        // Thousands of routes take tens of ms to parse and compile: in slices, as matching is.
        const routes: CompiledRoute[] = [];
        await eachYielding(rows, MATCH_SLICE_MS, (row) => routes.push(compileRoute(row)));
        return RouteIndex.build(routes.sort(byOrder), MATCH_SLICE_MS);
      });
      r.catch(() => this.routes.delete(zone));
      this.routes.set(zone, r);
    }
    return r;
  }

  async receive(p: Principal, msg: InboundMessage): Promise<InboundResult> {
    const route = await (await this.compiled(p.zone)).firstYielding(msg, this.gate);
    const by = principalId(p);
    const summary = {
      platform: msg.platform,
      room: msg.room,
      chat_jid: msg.chat_jid,
      sender: msg.sender,
      verb: msg.verb,
    };
    if (!route) return this.keep(p.zone, by, msg, 'no route matched');
    try {
      const d = await this.agents.deliver(p.zone, route.target, frame(msg), summary);
      await this.tables.write(async (tx) => {
        tx.append({
          zone: p.zone,
          type: 'group.routed',
          actor: by,
          session_id: d.sessionId,
          payload: { ...summary, routeId: route.id, seq: route.seq, group: route.target, how: d.how },
        });
      });
      return { routed: true, routeId: route.id, group: route.target, sessionId: d.sessionId, how: d.how };
    } catch (error) {
      // Kept, not dropped: the route matched but its group could not take it.
      const reason =
        error instanceof WarrenError
          ? `route ${route.id} to ${route.target}: ${error.message}`
          : String(error);
      if (!(error instanceof WarrenError)) throw error;
      return this.keep(p.zone, by, msg, reason);
    }
  }

  private async keep(zone: string, by: string, msg: InboundMessage, reason: string): Promise<InboundResult> {
    const row: GroupUnroutedTable = {
      id: this.kernel.ids.id('inb'),
      zone,
      platform: msg.platform,
      room: msg.room,
      chat_jid: msg.chat_jid,
      sender: msg.sender,
      verb: msg.verb,
      text: msg.text,
      attachments: JSON.stringify(msg.attachments ?? []),
      reason: reason.slice(0, 1000),
      received_at: 0,
    };
    await this.tables.write(async (tx) => {
      row.received_at = tx.now;
      await tx.db.insertInto('groups_unrouted').values(row).execute();
      tx.append({
        zone,
        type: 'group.unrouted',
        actor: by,
        payload: {
          id: row.id,
          platform: msg.platform,
          room: msg.room,
          chat_jid: msg.chat_jid,
          sender: msg.sender,
          verb: msg.verb,
          reason: row.reason,
        },
      });
    });
    return { routed: false, unroutedId: row.id, reason: row.reason };
  }
}

/** What the agent reads: who said it where, then the text (and attachments, if any). */
export function frame(msg: InboundMessage): string {
  const head = `[${msg.platform} ${msg.verb} from ${msg.sender} in ${msg.chat_jid || msg.room}]`;
  const att =
    msg.attachments && msg.attachments.length > 0 ? `\n[attachments] ${JSON.stringify(msg.attachments)}` : '';
  return `${head}\n${msg.text}${att}`;
}
