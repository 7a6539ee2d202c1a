import { Store, dropPostgresSchema } from '/work/main/src/store/store.ts';
import { systemClock } from '/work/main/src/util/clock.ts';
import { createIds } from '/work/main/src/util/ids.ts';
const schema = 't_probe_' + Math.random().toString(36).slice(2, 8);
try {
  const s = await Store.open({ url: 'postgres://postgres@127.0.0.1:5432/test', durability: 'process', schema }, systemClock, createIds(systemClock));
  console.log('opened', schema);
  await dropPostgresSchema(s.reader, schema);
  await s.close();
} catch (e) { console.log('FAILED', (e as Error).message); }
