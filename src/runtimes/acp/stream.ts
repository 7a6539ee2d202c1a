import { type AnyMessage, RequestError, type Stream } from '@agentclientprotocol/sdk';
import type { AgentSink } from '../types.ts';
import { clip } from './render.ts';

/** Small helpers of the ACP connection: observing it, reading errors, ignoring report promises. */

/** Ignore a report's promise: the supervisor logs a failed write itself. */
export const fire = (p: Promise<unknown>): void => void p.catch(() => {});

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The stream as the SDK sees it, with every incoming message shown to `observe` first, in order. */
export function tap(stream: Stream, observe: (m: AnyMessage) => void): Stream {
  return {
    writable: stream.writable,
    readable: stream.readable.pipeThrough(
      new TransformStream<AnyMessage, AnyMessage>({
        transform(m, controller) {
          observe(m);
          controller.enqueue(m);
        },
      }),
    ),
  };
}

/** Token counts from a prompt response (`usage`, an unstable ACP field some agents send). */
export function reportUsage(usage: unknown, sink: AgentSink): void {
  if (!usage || typeof usage !== 'object') return;
  const u = usage as { inputTokens?: unknown; outputTokens?: unknown };
  const out: { inputTokens?: number; outputTokens?: number } = {};
  if (typeof u.inputTokens === 'number') out.inputTokens = u.inputTokens;
  if (typeof u.outputTokens === 'number') out.outputTokens = u.outputTokens;
  if (Object.keys(out).length > 0) fire(sink.usage(out));
}

export function describe(error: unknown): string {
  if (error instanceof RequestError) {
    const data = error.data === undefined ? '' : `: ${String(clip(JSON.stringify(error.data), 1000))}`;
    return `${error.message}${data} (code ${error.code})`;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A start step that must answer within `ms`; its failure names the step. */
export async function bounded<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } catch (error) {
    throw new Error(`${what} failed: ${describe(error)}`);
  } finally {
    clearTimeout(timer);
  }
}
