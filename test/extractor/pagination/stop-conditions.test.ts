import assert from 'node:assert/strict';
import { fromPlain } from '../../../src/json/index.js';
import { phpJsonEncode } from '../../../src/php/index.js';
import { Stop, type PageRequest, type Paginator } from '../../../src/extractor/pagination/paginator.js';
import { ForceStop } from '../../../src/extractor/pagination/stop-conditions/force-stop.js';
import { LimitStop } from '../../../src/extractor/pagination/stop-conditions/limit-stop.js';
import { NextPageFlag } from '../../../src/extractor/pagination/stop-conditions/next-page-flag.js';
import { drive, ids, jobRequest, page, paginatorFor, show } from '../../support/pagination.js';

/** A method that never stops and records whether it was asked (to see which wrapper decided). */
class EndlessMethod implements Paginator {
  asked = 0;
  resets = 0;
  describe(): string {
    return 'endless';
  }
  first(job: PageRequest): PageRequest {
    return job;
  }
  next(job: PageRequest): PageRequest {
    this.asked++;
    return job;
  }
  reset(): void {
    this.resets++;
  }
  clone(): Paginator {
    return new EndlessMethod();
  }
}

/** A response with one record whose PHP json_encode is exactly `bytes` (>= 20) long. */
function sized(bytes: number): { items: number[]; p: string } {
  return { items: [1], p: 'x'.repeat(bytes - 20) }; // {"items":[1],"p":""} is 20 bytes
}

const stopReason = (next: unknown): string => {
  assert.ok(next instanceof Stop, 'expected a stop');
  return next.reason;
};

describe('pagination stop conditions', () => {
  describe('nextPageFlag', () => {
    // [flag value, PHP (bool)] — response objects are never empty, "false" and "no" are true
    const casts: Array<[unknown, boolean]> = [
      [true, true],
      [false, false],
      ['false', true],
      ['no', true],
      ['0', false],
      ['', false],
      [0, false],
      [0.0, false],
      [2, true],
      [[], false],
      [[0], true],
      [{}, true],
    ];
    for (const [value, bool] of casts) {
      it(`casts ${JSON.stringify(value)} to ${bool}`, () => {
        const method = new EndlessMethod();
        const flag = new NextPageFlag(method, { field: 'more', stopOn: false, ifNotSet: true });
        const next = flag.next(jobRequest(), page({ more: value, items: [] }));
        assert.equal(next instanceof Stop, !bool);
        assert.equal(method.asked, bool ? 1 : 0);
      });
    }

    it('absent, null, or a list response: ifNotSet decides', () => {
      for (const response of [{ items: [] }, { more: null }, [{ more: false }]]) {
        assert.ok(
          !(
            new NextPageFlag(new EndlessMethod(), { field: 'more', stopOn: false, ifNotSet: true }).next(
              jobRequest(),
              page(response),
            ) instanceof Stop
          ),
        );
        assert.ok(
          new NextPageFlag(new EndlessMethod(), { field: 'more', stopOn: false, ifNotSet: false }).next(
            jobRequest(),
            page(response),
          ) instanceof Stop,
        );
      }
    });

    it('ifNotSet defaults to stopOn', () => {
      const flag = paginatorFor({ method: 'pagenum', nextPageFlag: { field: 'last', stopOn: true } });
      assert.equal(
        stopReason(flag.next(jobRequest(), page(ids(1)))),
        'nextPageFlag: last is not set, which counts as true',
      );
    });
  });

  describe('forceStop', () => {
    it('pages: at most that many requests', () => {
      for (const pages of [1, 2, 3]) {
        const run = drive(paginatorFor({ method: 'pagenum', forceStop: { pages } }), jobRequest(), [
          ids(1),
          ids(2),
          ids(3),
          ids(4),
        ]);
        assert.equal(run.requests.length, pages);
        assert.equal(run.stop, `forceStop: ${pages} page${pages === 1 ? '' : 's'} reached`);
      }
    });

    it('time: stops once start + time <= now (start = the first request)', () => {
      let now = 1_000_000;
      const force = new ForceStop(new EndlessMethod(), { pages: null, time: 60, volume: null }, () => now * 1000);
      now += 500; // time before the first request does not count
      force.first(jobRequest());
      now += 59;
      assert.ok(!(force.next(jobRequest(), page({})) instanceof Stop));
      now += 1;
      assert.equal(stopReason(force.next(jobRequest(), page({}))), 'forceStop: time limit of 60 seconds reached');
    });

    it('time strings are PHP strtotime(time, 0); an unparsable one is 0 seconds', () => {
      assert.match(
        paginatorFor({ method: 'pagenum', forceStop: { time: '1 hour' } }).describe(jobRequest()),
        /forceStop \(at most 3600 s\)/,
      );
      assert.match(
        paginatorFor({ method: 'pagenum', forceStop: { time: '2 days' } }).describe(jobRequest()),
        /at most 172800 s/,
      );
      assert.match(
        paginatorFor({ method: 'pagenum', forceStop: { time: 'soonish' } }).describe(jobRequest()),
        /at most 0 s/,
      );
    });

    it('volume: the running PHP json_encode length; stops only when it exceeds the limit', () => {
      assert.equal(phpJsonEncode(fromPlain(sized(50))).length, 50);
      const run = drive(paginatorFor({ method: 'pagenum', forceStop: { volume: '100' } }), jobRequest(), [
        sized(50),
        sized(50),
        sized(20),
      ]);
      assert.equal(run.requests.length, 3);
      assert.equal(run.stop, 'forceStop: 120 bytes received, over the volume limit of 100 bytes');
    });

    it('volume counts PHP json_encode bytes: escaped slashes and \\u escapes', () => {
      const force = new ForceStop(new EndlessMethod(), { pages: null, time: null, volume: 17 }, Date.now);
      force.first(jobRequest());
      // {"u":"a/é"} is encoded as {"u":"a\/\u00e9"}: 17 bytes (not 11), not over; then {} makes 19
      assert.ok(!(force.next(jobRequest(), page({ u: 'a/é' })) instanceof Stop));
      assert.ok(force.next(jobRequest(), page({})) instanceof Stop);
    });

    it('checks pages, then time, then volume, short-circuiting; first() does not reset the volume (GE)', () => {
      const force = new ForceStop(new EndlessMethod(), { pages: 2, time: null, volume: 100 }, Date.now);
      force.first(jobRequest());
      assert.ok(!(force.next(jobRequest(), page(sized(40))) instanceof Stop)); // 40 bytes
      assert.match(stopReason(force.next(jobRequest(), page(sized(40)))), /pages reached/); // not counted
      force.first(jobRequest()); // a shared child copy's next run: pages restart, volume stays at 40
      assert.ok(!(force.next(jobRequest(), page(sized(40))) instanceof Stop)); // 80
      force.first(jobRequest());
      assert.equal(
        stopReason(force.next(jobRequest(), page(sized(40)))),
        'forceStop: 120 bytes received, over the volume limit of 100 bytes',
      );
    });

    it('reset() (the duplicate-page guard) restarts every counter and resets the method', () => {
      const method = new EndlessMethod();
      const force = new ForceStop(method, { pages: null, time: null, volume: 50 }, Date.now);
      force.first(jobRequest());
      force.next(jobRequest(), page(sized(40)));
      force.reset();
      assert.equal(method.resets, 1);
      force.first(jobRequest());
      assert.ok(!(force.next(jobRequest(), page(sized(40))) instanceof Stop));
    });
  });

  describe('limitStop', () => {
    // total after one page of 2 records, compared (PHP 7) with the field value
    const comparisons: Array<[unknown, boolean]> = [
      [2, true],
      [3, false],
      ['2', true],
      ['3', false],
      ['3 records', false], // leading number 3
      ['lots', true], // a non-numeric string is 0
      [2.5, false],
      [null, true], // any count >= null
      [false, true],
      [true, true], // compared as booleans: 2 is true
      [[], false], // an array is always greater
      [{ n: 1 }, true], // an object compares as 1
    ];
    for (const [total, stops] of comparisons) {
      it(`2 records against field value ${JSON.stringify(total)}: ${stops ? 'stops' : 'goes on'}`, () => {
        const limit = new LimitStop(new EndlessMethod(), { field: 'total' });
        limit.first(jobRequest());
        assert.equal(limit.next(jobRequest(), page({ total, items: [1, 2] })) instanceof Stop, stops);
      });
    }

    it('knows the job total for an ETA: the count, or the numeric field value of the last page', () => {
      const counted = new LimitStop(new EndlessMethod(), { count: 500 });
      assert.equal(counted.expectedRecords(), 500);
      const field = new LimitStop(new EndlessMethod(), { field: 'meta.total' });
      field.first(jobRequest());
      assert.equal(field.expectedRecords(), undefined, 'unknown before the first page');
      field.next(jobRequest(), page({ meta: { total: '1200' }, items: [1] }));
      assert.equal(field.expectedRecords(), 1200);
      field.next(jobRequest(), page({ meta: { total: 'lots' }, items: [1] }));
      assert.equal(field.expectedRecords(), undefined, 'a non-numeric total gives no ETA');
      field.first(jobRequest());
      assert.equal(field.expectedRecords(), undefined, 'forgotten for the next job');
      // decorators forward it: a forceStop around a limitStop
      const wrapped = paginatorFor({ method: 'pagenum', limitStop: { count: 7 }, forceStop: { pages: 3 } });
      assert.equal(wrapped.expectedRecords?.(), 7);
    });

    it('a missing field stops after the first page', () => {
      const limit = paginatorFor({ method: 'pagenum', limitStop: { field: 'meta.total' } });
      assert.equal(
        stopReason(limit.next(jobRequest(), page(ids(1)))),
        'limitStop: meta.total is not in the response (1 record so far)',
      );
    });

    it('count is int-cast: "abc" is 0 and stops after the first page', () => {
      const run = drive(paginatorFor({ method: 'pagenum', limitStop: { count: 'abc' } }), jobRequest(), [
        ids(1),
        ids(2),
      ]);
      assert.deepEqual(run.requests, ['users?page=1']);
      assert.equal(run.stop, 'limitStop: 1 of 0 records');
    });

    it('the count restarts at first() and at reset()', () => {
      const limit = new LimitStop(new EndlessMethod(), { count: 3 });
      limit.first(jobRequest());
      assert.ok(!(limit.next(jobRequest(), page(ids(1, 2))) instanceof Stop));
      limit.first(jobRequest());
      assert.ok(!(limit.next(jobRequest(), page(ids(1, 2))) instanceof Stop));
      limit.reset();
      assert.ok(!(limit.next(jobRequest(), page(ids(1, 2))) instanceof Stop));
      assert.equal(stopReason(limit.next(jobRequest(), page(ids(3)))), 'limitStop: 3 of 3 records');
    });
  });

  describe('composition', () => {
    it('the factory wraps nextPageFlag, then forceStop, then limitStop (outermost)', () => {
      const paginator = paginatorFor({
        method: 'pagenum',
        nextPageFlag: { field: 'more', stopOn: false },
        forceStop: { pages: 5 },
        limitStop: { count: 9 },
      });
      assert.ok(paginator instanceof LimitStop);
      assert.equal(
        paginator.describe(jobRequest()),
        'pagenum (page=1.., no limit); nextPageFlag (stop when more is false, missing = false); forceStop (at most 5 pages); limitStop (at most 9 records)',
      );
    });

    it('the outermost stop wins and the inner ones are not asked', () => {
      const method = new EndlessMethod();
      const flag = new NextPageFlag(method, { field: 'more', stopOn: false, ifNotSet: false });
      const force = new ForceStop(flag, { pages: 1, time: null, volume: null }, Date.now);
      const limit = new LimitStop(force, { count: 1 });
      limit.first(jobRequest());
      assert.match(stopReason(limit.next(jobRequest(), page({ more: false, items: [1] }))), /^limitStop/);
      assert.equal(method.asked, 0);
    });

    it("a stop condition does not reset the method; the method's own stop does not reset the conditions", () => {
      const paginator = paginatorFor({
        method: 'pagenum',
        limit: 2,
        limitStop: { count: 4 },
        forceStop: { volume: 1000 },
      });
      const job = jobRequest();
      const run = drive(paginator, job, [ids(1, 2), ids(3, 4)]);
      assert.equal(run.stop, 'limitStop: 4 of 4 records');
      assert.equal(show(paginator.first(job)), 'users?page=2&limit=2'); // the page stayed at 2
      const own = drive(paginator, job, [ids(5)]);
      assert.match(own.stop!, /underflow/);
      assert.equal(show(paginator.first(job)), 'users?page=1&limit=2');
    });

    it('stop conditions work without a method (one request anyway)', () => {
      const paginator = paginatorFor({ forceStop: { pages: 3 } });
      assert.deepEqual(drive(paginator, jobRequest(), [ids(1)]), {
        requests: ['users'],
        stop: 'no pagination is configured',
      });
    });

    it('clone() is a fresh copy of the whole chain', () => {
      const paginator = paginatorFor({ method: 'offset', limit: 1, forceStop: { pages: 2 } });
      const job = jobRequest();
      drive(paginator, job, [ids(1), ids(2)]);
      const copy = paginator.clone();
      assert.deepEqual(drive(copy, job, [ids(1), ids(2)]).requests, [
        'users?limit=1&offset=0',
        'users?limit=1&offset=1',
      ]);
    });
  });
});
