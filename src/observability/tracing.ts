import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ContextCarrier } from '../store/writer.ts';
import type { Principal } from '../vocab/principal.ts';

/**
 * OpenTelemetry traces: a span per syscall, exported over OTLP/HTTP. Loaded only when
 * tracing is configured (warren.ts imports this module lazily). Nothing global: no global
 * tracer provider or context manager is registered; this tracer keeps the current span in
 * its own AsyncLocalStorage, so two warrens in one process trace apart.
 */

export interface TracingOptions {
  /** The OTLP/HTTP traces URL, e.g. `http://127.0.0.1:4318/v1/traces`. */
  url: string;
  serviceName?: string;
  /** Recorded as `service.instance.id`. */
  nodeId?: string;
  /** How often finished spans are sent (ms; default 1000). */
  flushMs?: number;
}

export interface SyscallTracer {
  /** Run a syscall inside its span; `parent` is a W3C `traceparent` the caller sent. */
  syscall<T>(
    principal: Principal,
    name: string,
    input: unknown,
    parent: string | undefined,
    fn: () => Promise<T>,
  ): Promise<T>;
  /** The current span as a W3C `traceparent`, if any. */
  traceparent(): string | undefined;
  /** Keeps a function in the async context it was made in (the writer's units, see ContextCarrier). */
  carry: ContextCarrier;
  /** Send what is left, then stop. */
  shutdown(): Promise<void>;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent header as a remote parent context, or the root when it does not parse. */
export function parentContext(header: string | undefined): Context {
  const m = header ? TRACEPARENT.exec(header.trim().toLowerCase()) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: Number.parseInt(m[3]!, 16),
    isRemote: true,
  });
}

export function formatTraceparent(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The session a call is about: the caller's own, or the one its input or output names. */
function sessionOf(principal: Principal, input: unknown, output: unknown): string | undefined {
  if (principal.kind === 'session') return principal.sessionId;
  for (const o of [input, output]) {
    if (!o || typeof o !== 'object') continue;
    const r = o as Record<string, unknown>;
    for (const k of ['session', 'sessionId', 'id']) {
      const v = r[k];
      if (typeof v === 'string' && v.startsWith('ses')) return v;
      if (v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string')
        return (v as { id: string }).id;
    }
  }
  return undefined;
}

export function openTracer(opts: TracingOptions): SyscallTracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': opts.serviceName ?? 'warren',
      ...(opts.nodeId ? { 'service.instance.id': opts.nodeId } : {}),
    }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: opts.url }), {
        scheduledDelayMillis: opts.flushMs ?? 1000,
      }),
    ],
  });
  const tracer: Tracer = provider.getTracer('warren');
  const current = new AsyncLocalStorage<Context>();

  return {
    async syscall(principal, name, input, parent, fn) {
      const remote = parent !== undefined;
      const ctx = remote ? parentContext(parent) : (current.getStore() ?? ROOT_CONTEXT);
      const span = tracer.startSpan(
        name,
        {
          kind: remote ? SpanKind.SERVER : SpanKind.INTERNAL,
          attributes: {
            'warren.syscall': name,
            'warren.zone': principal.zone,
            'warren.caller.kind': principal.kind,
          },
        },
        ctx,
      );
      try {
        const out = await current.run(trace.setSpan(ctx, span), fn);
        const session = sessionOf(principal, input, out);
        if (session) span.setAttribute('warren.session', session);
        const seq = (out as { seq?: unknown } | null)?.seq;
        if (typeof seq === 'number') span.setAttribute('warren.seq', seq);
        return out;
      } catch (error) {
        const session = sessionOf(principal, input, undefined);
        if (session) span.setAttribute('warren.session', session);
        const code = (error as { code?: unknown })?.code;
        if (typeof code === 'string') span.setAttribute('warren.error.code', code);
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
    traceparent() {
      const ctx = current.getStore();
      const span = ctx ? trace.getSpan(ctx) : undefined;
      return span ? formatTraceparent(span) : undefined;
    },
    carry: ((fn: (...args: unknown[]) => unknown) => AsyncResource.bind(fn)) as unknown as ContextCarrier,
    shutdown: () => provider.shutdown(),
  };
}
