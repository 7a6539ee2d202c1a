import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.ts';
import { type Random, ulidFactory } from './ulid.ts';

/** Id generation, injected per kernel. Ids are prefixed so a stray id says what it names. */
export interface IdGenerator {
  /** The log's event id: a monotonic ULID. */
  event(): string;
  session(): string;
  stream(): string;
  fd(): string;
  /** Any other object's id (`task`, `esc`, …): `<prefix>_<ulid>`. */
  id(prefix: string): string;
  /** Unguessable secret material (tokens, keys). */
  secret(bytes?: number): string;
}

export function createIds(clock: Clock, random: Random = randomBytes): IdGenerator {
  const eventUlid = ulidFactory(() => clock.now(), random);
  const objectUlid = ulidFactory(() => clock.now(), random);
  const short = () => objectUlid().toLowerCase();
  return {
    event: eventUlid,
    session: () => `ses_${short()}`,
    stream: () => `str_${short()}`,
    fd: () => `fd_${short()}`,
    id: (prefix) => `${prefix}_${short()}`,
    secret: (bytes = 32) => Buffer.from(random(bytes)).toString('base64url'),
  };
}
