import { ERROR_STATUS, WarrenError } from '../../vocab/errors.ts';
import type { ErrorBody } from './wire.ts';

type ResultFrame = { id: number; ok: true; value?: unknown } | { id: number; ok: false; error: ErrorBody };

/**
 * The requests one side of a runner's WebSocket has in flight: each waits for the `result`
 * frame with its id, and fails at its deadline or when the wire goes. The server and the
 * runner each hold one.
 */
export class InFlight {
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();

  /** `unknownCode`: what an error code the other side sent and this one does not know becomes. */
  constructor(private readonly unknownCode: WarrenError['code']) {}

  /** Send a request under `id` (the caller numbers its frames) and wait for its result. */
  start(id: number, ms: number, late: () => WarrenError, send: () => void): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(late());
      }, ms);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      send();
    });
  }

  /** A result arrived: settle its request (none waits for an unknown or late id). */
  settle(f: ResultFrame): void {
    const p = this.pending.get(f.id);
    this.pending.delete(f.id);
    if (!p) return;
    if (f.ok) p.resolve(f.value);
    else {
      const code = Object.hasOwn(ERROR_STATUS, f.error.code)
        ? (f.error.code as WarrenError['code'])
        : this.unknownCode;
      p.reject(new WarrenError(code, f.error.message, f.error.details));
    }
  }

  /** The wire is gone: every request in flight fails with `error`. */
  failAll(error: () => WarrenError): void {
    for (const p of this.pending.values()) p.reject(error());
    this.pending.clear();
  }
}
