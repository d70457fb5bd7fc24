import assert from 'node:assert/strict';
import { JobEventStream, StreamClosed } from '../../../src/extractor/jobs/job-events.js';
import { Stop } from '../../../src/extractor/pagination/paginator.js';
import { ChildScheduler, WaitingTasks } from '../../../src/extractor/jobs/child-scheduler.js';
import type { ChildTask } from '../../../src/extractor/jobs/job-events.js';
import type { JobConfig } from '../../../src/extractor/config/job-config.js';

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const page = () => ({
  kind: 'page' as const,
  request: { method: 'GET' as const, url: 'x' },
  status: 200,
  bytes: 0,
  durationMs: 0,
  data: [],
  children: [],
});

/** A producer of `pages` pages that counts its fetches. */
function producer(stream: JobEventStream, pages: number) {
  const state = { fetches: 0, error: undefined as unknown };
  void (async () => {
    try {
      for (let i = 0; i < pages; i++) {
        await stream.beforeFetch();
        state.fetches++;
        stream.push(page());
      }
      stream.push({ kind: 'end', stop: new Stop('done', 'emptyPage'), fetches: 0 });
    } catch (error) {
      state.error = error;
    }
  })();
  return state;
}

describe('JobEventStream: how far a producer may fetch', () => {
  it('with nothing ahead, a page is fetched only when the consumer asks for it', async () => {
    const stream = new JobEventStream(0);
    const state = producer(stream, 5);
    await settle();
    assert.equal(state.fetches, 0, 'nothing before the consumer asks');
    assert.equal((await stream.next()).kind, 'page');
    await settle();
    assert.equal(state.fetches, 1, 'the consumer has page 1 and has not asked again: no page 2');
    stream.fetchNext();
    await settle();
    assert.equal(state.fetches, 2, 'fetchNext lets exactly one more go');
    stream.fetchNext();
    await settle();
    assert.equal(state.fetches, 2, 'asking twice for the same page fetches it once');
  });

  it('ahead N keeps at most N fetched pages the consumer has not taken', async () => {
    const stream = new JobEventStream(2);
    const state = producer(stream, 10);
    await settle();
    assert.equal(state.fetches, 2);
    await stream.next();
    await settle();
    assert.equal(state.fetches, 3, 'one taken, one more fetched');
    for (let i = 0; i < 9; i++) await stream.next();
    assert.equal((await stream.next()).kind, 'end');
    assert.equal(state.fetches, 10);
  });

  it('a repeated page that is never written frees its fetch (no deadlock for the next combination)', async () => {
    const stream = new JobEventStream(0);
    let fetches = 0;
    void (async () => {
      await stream.beforeFetch();
      fetches++;
      stream.push({ kind: 'end', stop: new Stop('repeated', 'duplicatePage'), fetches: 1 });
      await stream.beforeFetch();
      fetches++;
      stream.push(page());
      stream.push({ kind: 'done' });
    })();
    assert.equal((await stream.next()).kind, 'end');
    assert.equal((await stream.next()).kind, 'page');
    assert.equal((await stream.next()).kind, 'done');
    assert.equal(fetches, 2);
  });

  it('close stops a waiting producer with StreamClosed', async () => {
    const stream = new JobEventStream(1);
    const state = producer(stream, 5);
    await settle();
    stream.close();
    await settle();
    assert.ok(state.error instanceof StreamClosed);
    assert.equal(state.fetches, 1);
  });
});

describe('ChildScheduler: which child tasks run ahead', () => {
  const job = (name: string) => ({ endpoint: name }) as unknown as JobConfig;
  const task = (j: JobConfig, order: number[]) => ({ job: j, order }) as unknown as ChildTask;

  function scheduler(limits: Map<JobConfig, number>) {
    const started: Array<{ order: string; ahead: number }> = [];
    const s = new ChildScheduler(
      (j) => limits.get(j)!,
      (t, ahead) => {
        t.stream = {} as never;
        started.push({ order: t.order.join('.'), ahead });
      },
      2,
    );
    return { s, started };
  }

  it('starts up to the limit in depth-first order, the next one when one is consumed', () => {
    const items = job('items');
    const { s, started } = scheduler(new Map([[items, 2]]));
    const tasks = [task(items, [0, 0, 2]), task(items, [0, 0, 0]), task(items, [0, 0, 1])];
    s.register(tasks);
    assert.deepEqual(
      started.map((x) => x.order),
      ['0.0.0', '0.0.1'],
      'the earliest two, whatever the registration order',
    );
    assert.ok(
      started.every((x) => x.ahead === 2),
      'a lane of 2 fetches ahead',
    );
    s.demand(tasks[1]);
    s.release(tasks[1]);
    assert.deepEqual(
      started.map((x) => x.order),
      ['0.0.0', '0.0.1', '0.0.2'],
    );
  });

  it('with a limit of 1 tasks start one by one and fetch nothing ahead', () => {
    const items = job('items');
    const { s, started } = scheduler(new Map([[items, 1]]));
    const tasks = [task(items, [0, 0]), task(items, [0, 1])];
    s.register(tasks);
    assert.deepEqual(started, [{ order: '0.0', ahead: 0 }]);
    s.release(tasks[0]);
    assert.deepEqual(
      started.map((x) => x.order),
      ['0.0', '0.1'],
    );
  });

  it('the task the consumer reaches starts even when its lane is full (nothing waits on itself)', () => {
    const notes = job('notes');
    const { s, started } = scheduler(new Map([[notes, 1]]));
    const later = task(notes, [0, 5, 0]);
    const earlier = task(notes, [0, 1, 0]);
    s.register([later]);
    s.register([earlier]);
    assert.deepEqual(
      started.map((x) => x.order),
      ['0.5.0'],
    );
    s.demand(earlier);
    assert.deepEqual(
      started.map((x) => x.order),
      ['0.5.0', '0.1.0'],
    );
    s.demand(earlier);
    assert.equal(started.length, 2, 'a started task is not started again');
  });

  it('keeps thousands of waiting tasks in depth-first order through removals at the front and in the middle', () => {
    const items = job('items');
    const waiting = new WaitingTasks();
    const tasks = Array.from({ length: 5000 }, (_, i) => task(items, [Math.floor(i / 100), i % 100]));
    // mostly in order, some late arrivals from an earlier page
    for (const t of tasks.filter((_, i) => i % 7 !== 0)) waiting.insert(t);
    for (const t of tasks.filter((_, i) => i % 7 === 0)) waiting.insert(t);
    waiting.remove(tasks[2500]);
    waiting.remove(tasks[2500]);
    const out: ChildTask[] = [];
    for (let t = waiting.first(); t; t = waiting.first()) {
      out.push(t);
      waiting.remove(t);
    }
    assert.equal(waiting.size, 0);
    assert.deepEqual(
      out,
      tasks.filter((_, i) => i !== 2500),
      'every task once, in depth-first order, past the compaction of the front',
    );
  });
});
