import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Counts the requests a fixture server is handling: how many now and the most at once, so tests of
 * parallel fetching can prove requests overlapped and stayed within a limit.
 */
export class InFlight {
  now = 0;
  max = 0;

  /** Handles one request inside the count. */
  async around<T>(handle: () => Promise<T>): Promise<T> {
    this.now++;
    this.max = Math.max(this.max, this.now);
    try {
      return await handle();
    } finally {
      this.now--;
    }
  }

  /** Waits until nothing is in flight (requests fetched ahead and cancelled by a previous test may still be), then starts a new maximum. */
  async quiet(): Promise<void> {
    while (this.now > 0) await sleep(5);
    this.max = 0;
  }
}
