/**
 * Rooms (issue 25):
 * - roomStorage: how much a SQLite database grows for 100 messages of 256 KiB written into a
 *   room of 20 async listeners (script agents, each taking every message as a turn's input),
 *   as a ratio to the payload. Baseline, same run: the same messages into a room of one
 *   listener. The goal: at most 1.5× the payload however many listen (before: 22×).
 *   Sized by SQLite itself (page_count × page_size, the WAL's pages included).
 */
import { type Growth, roomGrowth } from '../test/kernel/room-fanout.ts';
import { round } from './lib/stats.ts';
import type { BenchRow } from './store.ts';

const MESSAGES = Number(process.env.ROOM_BENCH_MESSAGES ?? 100);
const KIB = 256;

const mib = (n: number) => `${round(n / 2 ** 20, 1)} MiB`;

export async function roomStorage(): Promise<BenchRow[]> {
  const one: Growth = await roomGrowth({ listeners: 1, messages: MESSAGES, kib: KIB });
  const twenty: Growth = await roomGrowth({ listeners: 20, messages: MESSAGES, kib: KIB });
  return [
    {
      name: `roomStorage: db growth / payload, ${MESSAGES} × ${KIB} KiB into 20 listeners (baseline: 1 listener)`,
      value: round(twenty.ratio, 2),
      unit: '× payload',
      baseline: round(one.ratio, 2),
      ratio: round(twenty.ratio / one.ratio, 2),
      max: 1.5,
      note: `grew ${mib(twenty.growthBytes)} (1 listener: ${mib(one.growthBytes)}) for ${mib(twenty.payloadBytes)} written`,
    },
  ];
}

export const roomBenches = { roomStorage };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  console.log(formatRows(await roomStorage()));
}
