import assert from 'node:assert/strict';
import { heapGrowthFlag, youngGenerationIsOurs } from '../../src/common/heap-growth.js';

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

describe('young generation cap of gex run', () => {
  it('applies unless node was given a young generation size', () => {
    assert.equal(youngGenerationIsOurs([]), true);
    assert.equal(youngGenerationIsOurs(['--max-old-space-size=512'], '--enable-source-maps'), true);
  });

  it("leaves a user's own setting alone: command line or NODE_OPTIONS, either spelling", () => {
    assert.equal(youngGenerationIsOurs(['--max-semi-space-size=16']), false);
    assert.equal(youngGenerationIsOurs(['--min_semi_space_size=4']), false);
    assert.equal(youngGenerationIsOurs([], '--enable-source-maps --max-semi-space-size=2'), false);
    assert.equal(youngGenerationIsOurs([], '--semi-space-growth-factor=4'), false);
  });
});
