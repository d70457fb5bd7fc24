import assert from 'node:assert/strict';
import { heapGrowthFlag } from '../../src/common/heap-growth.js';

describe('heap growth limit of gex run', () => {
  it('halves V8 growth factor by default', () => {
    assert.equal(heapGrowthFlag([]), '--heap-growing-percent=100');
    assert.equal(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=512']), '--heap-growing-percent=100');
  });

  it("leaves a user's own node flag alone (either spelling)", () => {
    assert.equal(heapGrowthFlag(['--heap-growing-percent=300']), null);
    assert.equal(heapGrowthFlag(['--max-old-space-size=512', '--heap_growing_percent=50']), null);
  });
});
