import { Writable } from 'node:stream';

/** A stream that claims to be a terminal (of `columns` when given) and keeps what is written to it. */
export function ttySink(columns?: number) {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _e, done) {
        chunks.push(String(chunk));
        done();
      },
    }),
    { isTTY: true, columns },
  );
  return { stream, chunks, text: () => chunks.join('') };
}

/** A clock in milliseconds that only the test moves. */
export function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
