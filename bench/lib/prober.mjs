/**
 * The stall bench's prober, a process of its own (`node prober.mjs <url> <everyMs> <maxMs>`), so
 * that what the bench does to attack never delays a probe or its timing. It warms up first
 * (undici loads on the first fetch, its connection opens) and prints `ready`; then asks
 * `/healthz` every `everyMs` without waiting for answers (open loop: a stall shows as every
 * request it held, not as one slow sample) until a line on stdin or `maxMs`, and prints one
 * JSON line: the latencies (ms) and the longest its own event loop was held (`lagMs`), which
 * says when the machine, not the server, delayed the probes.
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const [url, every, maxMs] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const get = () =>
  fetch(`${url}/healthz`, { signal: AbortSignal.timeout(60_000) }).then((r) => r.arrayBuffer());
for (let i = 0; i < 20; i++) await get();
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
let stop = false;
process.stdin.on('data', () => {
  stop = true;
});
process.stdout.write('ready\n');
const samples = [];
const sent = [];
const start = performance.now();
for (let i = 0; !stop && performance.now() - start < maxMs; i++) {
  const wait = start + i * every - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const t = performance.now();
  const took = () => performance.now() - t;
  sent.push(Number(process.hrtime.bigint() / 1000n));
  samples.push(get().then(took, took));
}
const latencies = await Promise.all(samples);
// STALL_PROFILE's companion: each probe's send time (µs, the monotonic clock of the server's
// profile and loop watch) and latency, to line slow probes up with what the server did.
if (process.env.PROBER_DUMP) writeFileSync(process.env.PROBER_DUMP, JSON.stringify({ sent, latencies }));
process.stdout.write(`${JSON.stringify({ latencies, lagMs: Math.round(lag.max / 1e4) / 100 })}\n`);
process.exit(0);
