import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A 26-character ULID: 48 bits of milliseconds then 80 random bits, Crockford base32. */
export function newVersionIdentifier(now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += CROCKFORD[random[i] % 32];
  return time + tail;
}

/** ISO 8601 with a numeric offset without colon, as Keboola prints it: `2017-02-14T14:38:26+0000`. */
export function timestamp(date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}+0000`;
}
