import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type Random = (n: number) => Uint8Array;

/**
 * A monotonic ULID factory. Each kernel owns one, so ids minted in the same millisecond
 * still sort in the order they were minted (the log assigns them in seq order).
 */
export function ulidFactory(now: () => number, random: Random = randomBytes): () => string {
  let lastTime = -1;
  let lastRand: Uint8Array = new Uint8Array(10);
  return () => {
    let time = now();
    if (time <= lastTime) {
      time = lastTime;
      lastRand = increment(lastRand);
    } else {
      lastTime = time;
      lastRand = Uint8Array.from(random(10));
    }
    return encodeTime(time) + encodeRandom(lastRand);
  };
}

function increment(bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 255) {
      out[i]! += 1;
      return out;
    }
    out[i] = 0;
  }
  throw new Error('ULID randomness overflow within one millisecond');
}

function encodeTime(time: number): string {
  let t = time;
  let s = '';
  for (let i = 0; i < 10; i++) {
    s = ALPHABET[t % 32] + s;
    t = Math.floor(t / 32);
  }
  return s;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 chars, 5 bits at a time.
  let bits = 0;
  let value = 0;
  let s = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      s += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return s;
}
