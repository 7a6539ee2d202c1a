import type { z } from 'zod';
import type * as s from '../../../contract/schemas.ts';

/** Shared pieces of the views: the output shapes and how a time or a payload reads in a cell. */

export type Session = z.output<typeof s.session>;
export type Fd = z.output<typeof s.fd>;
export type Stream = z.output<typeof s.stream>;
export type StreamListing = z.output<typeof s.streamListing>;
export type Message = z.output<typeof s.message>;
export type LogEvent = z.output<typeof s.event>;

export interface ViewContext {
  /** Terminal width, when known. */
  width?: number;
}

/** Renders one syscall's output for a person. */
export type View = (output: unknown, ctx: ViewContext) => string;

/** Outputs arrive as JSON the server promised matches the schema; the views trust that shape. */
export const view =
  <T>(render: (output: T, ctx: ViewContext) => string): View =>
  (output, ctx) =>
    render(output as T, ctx);

export const iso = (ms: number | null | undefined): string =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : '';

export const compactJson = (value: unknown): string =>
  value === undefined ? '' : (JSON.stringify(value) ?? '');

export const text = (value: unknown): string =>
  value === null || value === undefined ? '' : typeof value === 'string' ? value : compactJson(value);

/** An event's content: its text when it has one, else its payload. */
export const eventContent = (payload: Record<string, unknown>): string =>
  typeof payload.text === 'string' ? payload.text : compactJson(payload);

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export const list = (ids: readonly string[]): string => (ids.length ? ids.join(', ') : 'none');
