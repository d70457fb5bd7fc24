import assert from 'node:assert/strict';
import { fromPlain } from '../../src/json/index.js';
import { ReadCache } from '../../src/server/operations/read-cache.js';

/** A cache over a marker the test controls, counting how often bodies are built. */
function cacheWith(limits = {}) {
  const state = { marker: 'm1' as string | null, builds: 0 };
  const cache = new ReadCache(async () => state.marker, limits);
  const body = async (key: string, value: unknown = { key }) =>
    String(
      await cache.body(key, async () => {
        state.builds++;
        return fromPlain(value);
      }),
    );
  return { state, cache, body };
}

describe('ReadCache', () => {
  it('reuses a body while the marker is unchanged and rebuilds after it changes', async () => {
    const { state, body } = cacheWith();
    assert.equal(await body('a', { v: 1 }), '{"v":1}');
    assert.equal(await body('a', { v: 2 }), '{"v":1}', 'unchanged store: the first body');
    assert.equal(state.builds, 1);
    state.marker = 'm2';
    assert.equal(await body('a', { v: 2 }), '{"v":2}');
    assert.equal(state.builds, 2);
  });

  it('keeps keys apart', async () => {
    const { state, body } = cacheWith();
    assert.equal(await body('a', [1]), '[1]');
    assert.equal(await body('b', [2]), '[2]');
    assert.equal(await body('a', [3]), '[1]');
    assert.equal(state.builds, 2);
  });

  it('caches nothing when the backend cannot tell about changes (null marker)', async () => {
    const { state, cache, body } = cacheWith();
    state.marker = null;
    await body('a');
    await body('a');
    assert.equal(state.builds, 2);
    assert.equal(cache.size, 0);
  });

  it('does not cache a failed build', async () => {
    const { state, cache } = cacheWith();
    await assert.rejects(
      cache.body('a', async () => Promise.reject(new Error('not found'))),
      /not found/,
    );
    assert.equal(cache.size, 0);
    assert.equal(String(await cache.body('a', async () => fromPlain({ ok: true }))), '{"ok":true}');
    assert.equal(state.builds, 0, 'the counter is only bumped by body() of the helper');
  });

  it('evicts the least recently used bodies beyond maxBytes and skips bodies beyond maxEntryBytes', async () => {
    // each body below is 12 bytes: {"k":"aaaa"}
    const { state, cache, body } = cacheWith({ maxBytes: 30, maxEntryBytes: 20 });
    await body('a', { k: 'aaaa' });
    await body('b', { k: 'bbbb' });
    await body('a', { k: 'aaaa' }); // a is now the most recent
    await body('c', { k: 'cccc' }); // 36 bytes > 30: b goes
    assert.equal(cache.size, 2);
    const before = state.builds;
    await body('a', { k: 'aaaa' });
    assert.equal(state.builds, before, 'a stayed');
    await body('b', { k: 'bbbb' });
    assert.equal(state.builds, before + 1, 'b was evicted');
    await body('big', { k: 'x'.repeat(30) });
    await body('big', { k: 'x'.repeat(30) });
    assert.equal(state.builds, before + 3, 'a body over maxEntryBytes is never kept');
  });
});
