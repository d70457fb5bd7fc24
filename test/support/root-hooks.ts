import { killChildren, nextTest, stopping } from './children.js';

/**
 * Mocha root hooks (.mocharc.json "require"; in parallel mode they run for each test file): no
 * process a test started outlives a failed test, nor the test file.
 */
export const mochaHooks = {
  beforeEach(): void {
    nextTest();
  },
  afterEach(this: Mocha.Context): void {
    if (this.currentTest?.state === 'failed') {
      const killed = killChildren('test');
      if (killed > 0)
        console.error(`  (killed ${killed} process(es) left by the failed test "${this.currentTest.title}")`);
    }
  },
  async afterAll(): Promise<void> {
    await stopping();
    const killed = killChildren('all');
    if (killed > 0) console.error(`  (killed ${killed} process(es) still running at the end of a test file)`);
  },
};
