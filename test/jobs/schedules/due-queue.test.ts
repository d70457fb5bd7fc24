import assert from 'node:assert/strict';
import { DueQueue } from '../../../src/jobs/schedules/due-queue.js';

describe('the queue of next ticks', () => {
  it('hands out keys in the order they are due, each once, as last set', () => {
    const queue = new DueQueue<string>();
    queue.set('c', 30);
    queue.set('a', 10);
    queue.set('b', 20);
    queue.set('a', 25); // moved later
    queue.set('d', 5);
    queue.set('d', undefined); // removed
    assert.equal(queue.earliest(), 20);
    assert.equal(queue.takeDue(19), undefined, 'nothing due yet');
    const taken: string[] = [];
    for (let key = queue.takeDue(30); key !== undefined; key = queue.takeDue(30)) taken.push(key);
    assert.deepEqual(taken, ['b', 'a', 'c']);
    assert.equal(queue.size, 0);
    assert.equal(queue.earliest(), undefined);
  });

  it('a key set again and again does not grow the heap past twice the keys it holds', () => {
    const queue = new DueQueue<number>();
    for (let i = 0; i < 10; i++) queue.set(i, 1_000_000 + i);
    for (let round = 0; round < 10_000; round++) queue.set(round % 10, 2_000_000 + round);
    const heap = (queue as unknown as { heap: { length: number } }).heap;
    assert.ok(heap.length <= 2 * queue.size + 64, `${heap.length} items for ${queue.size} keys`);
    assert.equal(queue.size, 10);
    assert.equal(queue.earliest(), 2_000_000 + 9_990);
  });
});
