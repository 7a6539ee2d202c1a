import { renderTable } from '../table.ts';
import { compactJson, eventContent, iso, type LogEvent, type View, view } from './format.ts';

/** Reads of the action log. */

const sessionEvents = view<{ events: LogEvent[] }>((out, ctx) =>
  renderTable(
    ['Seq', 'Type', 'Timestamp', 'Content'],
    out.events.map((e) => [String(e.seq), e.type, iso(e.ts), eventContent(e.payload)]),
    { ...ctx, empty: 'no events' },
  ),
);

const events = view<{ events: LogEvent[] }>((out, ctx) =>
  renderTable(
    ['Seq', 'ID', 'Type', 'Timestamp', 'Payload'],
    out.events.map((e) => [String(e.seq), e.id, e.type, iso(e.ts), compactJson(e.payload)]),
    { ...ctx, empty: 'no events' },
  ),
);

export const eventViews: Record<string, View> = { session_events: sessionEvents, events };
