import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/common/errors.js';
import { decodeJson, fromPlain } from '../../../src/json/index.js';
import { createPaginator } from '../../../src/extractor/pagination/factory.js';
import { readTotal } from '../../../src/extractor/pagination/first-page-total.js';
import {
  Stop,
  type PageRequest,
  type Paginator,
  type ReceivedPage,
} from '../../../src/extractor/pagination/paginator.js';
import { jobRequest, page, show } from '../../support/pagination.js';

/** A paginator from plain `api.pagination` JSON, with its warnings collected. */
function paginatorWithWarnings(config: Record<string, unknown>): { paginator: Paginator; warnings: string[] } {
  const warnings: string[] = [];
  return {
    paginator: createPaginator(fromPlain(config), 'parameters.api.pagination', null, (m) => warnings.push(m)),
    warnings,
  };
}

/** `{items: [n records]}` plus extra keys. */
function records(count: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...extra, items: Array.from({ length: count }, (_, i) => ({ id: i })) };
}

/** Runs the job loop over `responses` (given per request, in order): the requests and the stop. */
function run(
  paginator: Paginator,
  job: PageRequest,
  responses: Array<unknown>,
): { requests: string[]; stop: Stop | null } {
  const requests = [show(paginator.first(job))];
  for (const response of responses) {
    const next = paginator.next(job, typeof response === 'string' ? pageOfText(response) : page(response));
    if (next instanceof Stop) return { requests, stop: next };
    requests.push(show(next));
  }
  return { requests, stop: null };
}

/** A page from raw JSON text (numbers beyond int64 and floats as the decoder gives them). */
function pageOfText(text: string): ReceivedPage {
  return page(decodeJson(text));
}

const job = jobRequest('items');

describe('pagination total from the first page (totalPath, totalPagesPath)', () => {
  describe('pagenum', () => {
    it('totalPagesPath: ends after the last page by it, later pages need not repeat it', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPagesPath: 'meta.pages' });
      const { requests, stop } = run(paginator, job, [
        records(2, { meta: { pages: 3 } }),
        records(2),
        records(2),
        records(2),
      ]);
      assert.deepEqual(requests, ['items?page=1&limit=2', 'items?page=2&limit=2', 'items?page=3&limit=2']);
      assert.equal(stop?.code, 'total');
      assert.equal(stop?.reason, 'total: page 3 was the last (3 pages at meta.pages)');
      assert.equal(stop?.cap, false);
    });

    it('totalPath: the page reaching the total is the last (no empty page asked for)', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPath: 'meta.total' });
      const { requests, stop } = run(paginator, job, [
        records(2, { meta: { total: 6 } }),
        records(2),
        records(2),
        records(0),
      ]);
      assert.equal(requests.length, 3);
      assert.equal(stop?.code, 'total');
      assert.equal(stop?.reason, 'total: page 3 was the last (6 records at meta.total, 2 per page)');
    });

    it('a natural end before the total still ends the job, with its own reason', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPath: 'meta.total' });
      const { requests, stop } = run(paginator, job, [records(2, { meta: { total: 100 } }), records(1)]);
      assert.equal(requests.length, 2);
      assert.equal(stop?.code, 'underflow');
      assert.equal(stop?.reason, 'underflow: the page had 1 record, less than the limit 2');
    });

    it('without a limit: totalPagesPath works as it is, totalPath takes the first page’s size', () => {
      const byPages = paginatorWithWarnings({ method: 'pagenum', totalPagesPath: 'pages' }).paginator;
      assert.equal(run(byPages, job, [records(3, { pages: 2 }), records(3), records(3)]).requests.length, 2);
      const byRecords = paginatorWithWarnings({ method: 'pagenum', totalPath: 'total' }).paginator;
      const { requests, stop } = run(byRecords, job, [records(4, { total: 10 }), records(4), records(2), records(0)]);
      assert.deepEqual(requests, ['items?page=1', 'items?page=2', 'items?page=3']);
      assert.equal(stop?.reason, 'total: page 3 was the last (10 records at total, 4 per page)');
      // a first page without records is the natural end (no page size to count with)
      const empty = paginatorWithWarnings({ method: 'pagenum', totalPath: 'total' }).paginator;
      assert.equal(run(empty, job, [records(0, { total: 10 })]).stop?.code, 'emptyPage');
    });

    it('a total of 0 ends the job after its first page', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPath: 'total' });
      assert.equal(run(paginator, job, [records(2, { total: 0 })]).stop?.code, 'total');
    });

    it('firstPage 0: pages 0 .. pages − 1', () => {
      const { paginator } = paginatorWithWarnings({
        method: 'pagenum',
        limit: 1,
        firstPage: 0,
        totalPagesPath: 'pages',
      });
      assert.deepEqual(run(paginator, job, [records(1, { pages: 3 }), records(1), records(1)]).requests, [
        'items?page=0&limit=1',
        'items?page=1&limit=1',
        'items?page=2&limit=1',
      ]);
    });

    it('predicts nothing until the first response tells the total, then only up to the last page', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 10, totalPagesPath: 'pages' });
      paginator.first(job);
      assert.deepEqual(paginator.predict!(job, 8), [], 'the first response is awaited');
      paginator.next(job, page(records(10, { pages: 4 })));
      assert.deepEqual(paginator.predict!(job, 8).map(show), ['items?page=3&limit=10', 'items?page=4&limit=10']);
      paginator.next(job, page(records(10)));
      paginator.next(job, page(records(10)));
      assert.deepEqual(paginator.predict!(job, 8), [], 'on the last page');
    });

    it('without the option a limit still predicts as before (no waiting for the first response)', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 10 });
      paginator.first(job);
      assert.equal(paginator.predict!(job, 3).length, 3);
    });

    it('a later total (changed or absent) is not read: the first one stands', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 1, totalPath: 'total' });
      const { requests, stop } = run(paginator, job, [records(1, { total: 2 }), records(1, { total: 50 }), records(1)]);
      assert.equal(requests.length, 2);
      assert.equal(stop?.code, 'total');
    });

    it('each job instance (a child copy, a job after a reset) reads its own first response', () => {
      const { paginator } = paginatorWithWarnings({ method: 'pagenum', limit: 1, totalPagesPath: 'pages' });
      const child = paginator.clone();
      assert.equal(run(child, job, [records(1, { pages: 1 })]).requests.length, 1);
      assert.equal(run(child, job, [records(1, { pages: 3 }), records(1), records(1)]).requests.length, 3);
    });

    it('gives the ETA its total: records, or pages × page size', () => {
      const byRecords = paginatorWithWarnings({ method: 'pagenum', limit: 10, totalPath: 'total' }).paginator;
      byRecords.first(job);
      assert.equal(byRecords.expectedRecords!(), undefined);
      byRecords.next(job, page(records(10, { total: 95 })));
      assert.equal(byRecords.expectedRecords!(), 95);
      const byPages = paginatorWithWarnings({ method: 'pagenum', limit: 10, totalPagesPath: 'pages' }).paginator;
      byPages.first(job);
      byPages.next(job, page(records(10, { pages: 7 })));
      assert.equal(byPages.expectedRecords!(), 70);
      // limitStop's count is the smaller bound here
      const capped = paginatorWithWarnings({
        method: 'pagenum',
        limit: 10,
        totalPath: 'total',
        limitStop: { count: 30 },
      }).paginator;
      capped.first(job);
      capped.next(job, page(records(10, { total: 95 })));
      assert.equal(capped.expectedRecords!(), 30);
      const totalFirst = paginatorWithWarnings({
        method: 'pagenum',
        limit: 10,
        totalPath: 'total',
        limitStop: { count: 300 },
      }).paginator;
      totalFirst.first(job);
      totalFirst.next(job, page(records(10, { total: 95 })));
      assert.equal(totalFirst.expectedRecords!(), 95);
    });
  });

  describe('offset', () => {
    it('totalPath: the page at offset + limit ≥ total is the last; predicted offsets stop there', () => {
      const { paginator } = paginatorWithWarnings({ method: 'offset', limit: 10, totalPath: 'meta.total' });
      paginator.first(job);
      assert.deepEqual(paginator.predict!(job, 5), []);
      const second = paginator.next(job, page(records(10, { meta: { total: 30 } })));
      assert.equal(show(second), 'items?limit=10&offset=10');
      assert.deepEqual(paginator.predict!(job, 5).map(show), ['items?limit=10&offset=20']);
      paginator.next(job, page(records(10)));
      const stop = paginator.next(job, page(records(10)));
      assert.ok(stop instanceof Stop);
      assert.equal(stop.code, 'total');
      assert.equal(stop.reason, 'total: the page at offset 20 was the last (30 records at meta.total, 10 per page)');
    });

    it('totalPagesPath counts pages of `limit` records from offset 0', () => {
      const { paginator } = paginatorWithWarnings({ method: 'offset', limit: 5, totalPagesPath: 'pages' });
      const { requests, stop } = run(paginator, job, [records(5, { pages: 2 }), records(5), records(5)]);
      assert.deepEqual(requests, ['items?limit=5&offset=0', 'items?limit=5&offset=5']);
      assert.equal(stop?.code, 'total');
    });

    it('offsetFromJob: the total still counts from offset 0; the ETA counts what is left', () => {
      const { paginator } = paginatorWithWarnings({
        method: 'offset',
        limit: 10,
        offsetFromJob: true,
        totalPath: 'total',
      });
      const fromTwenty = jobRequest('items', { offset: 20 });
      const { requests, stop } = run(paginator, fromTwenty, [records(10, { total: 50 }), records(10), records(10)]);
      assert.deepEqual(requests, ['items?offset=20&limit=10', 'items?offset=30&limit=10', 'items?offset=40&limit=10']);
      assert.equal(stop?.code, 'total');
      paginator.first(fromTwenty);
      paginator.next(fromTwenty, page(records(10, { total: 50 })));
      assert.equal(paginator.expectedRecords!(), 30);
    });

    it('underflow keeps its reason and code', () => {
      const { paginator } = paginatorWithWarnings({ method: 'offset', limit: 10, totalPath: 'total' });
      assert.equal(
        run(paginator, job, [records(10, { total: 25 }), records(10), records(5)]).stop?.reason,
        'underflow: the page had 5 records, less than the limit 10',
      );
    });
  });

  describe('caps stay absolute', () => {
    it('forceStop.pages bounds the prediction below a known total', () => {
      const { paginator } = paginatorWithWarnings({
        method: 'pagenum',
        limit: 10,
        totalPagesPath: 'pages',
        forceStop: { pages: 3 },
      });
      paginator.first(job);
      paginator.next(job, page(records(10, { pages: 100 })));
      assert.deepEqual(paginator.predict!(job, 20).map(show), ['items?page=3&limit=10']);
      paginator.next(job, page(records(10)));
      const stop = paginator.next(job, page(records(10)));
      assert.ok(stop instanceof Stop);
      assert.equal(stop.code, 'forceStop.pages');
      assert.equal(stop.cap, true);
      assert.equal(stop.describe(), 'stopped by cap forceStop.pages (forceStop: 3 pages reached)');
    });
  });

  describe('a total gex cannot use is ignored with one warning', () => {
    // [response text, what the warning says]
    const hostile: Array<[string, RegExp]> = [
      ['{"items":[1,2]}', /is not in the first response/],
      ['{"total":null,"items":[1,2]}', /is not in the first response/],
      ['{"total":-5,"items":[1,2]}', /is -5 in the first response, not a whole number of 0 or more/],
      ['{"total":2.5,"items":[1,2]}', /is 2\.5 in the first response, not a whole number/],
      ['{"total":"abc","items":[1,2]}', /is "abc" in the first response, not a whole number/],
      ['{"total":"12abc","items":[1,2]}', /is "12abc"/],
      ['{"total":"-3","items":[1,2]}', /is "-3"/],
      ['{"total":"NaN","items":[1,2]}', /is "NaN"/],
      ['{"total":"Infinity","items":[1,2]}', /is "Infinity"/],
      ['{"total":true,"items":[1,2]}', /is true/],
      ['{"total":{"n":5},"items":[1,2]}', /is an object/],
      ['{"total":[5],"items":[1,2]}', /is a list/],
      ['{"total":1e300,"items":[1,2]}', /too large to be a count/],
      ['{"total":100000000000000000000,"items":[1,2]}', /too large to be a count/],
      ['{"total":1152921504606846976,"items":[1,2]}', /too large to be a count/],
      ['{"total":"99999999999999999999","items":[1,2]}', /too large to be a count/],
      ['[1,2]', /is not in the first response/],
    ];
    for (const [text, problem] of hostile) {
      it(`${text}: warned once, paging goes on as without the option`, () => {
        const { paginator, warnings } = paginatorWithWarnings({
          method: 'pagenum',
          limit: 2,
          totalPath: 'total',
          concurrency: 4,
        });
        paginator.first(job);
        const next = paginator.next(job, pageOfText(text));
        assert.equal(show(next), 'items?page=2&limit=2', 'a full page: the next one is asked for');
        assert.equal(warnings.length, 1);
        assert.match(warnings[0], problem);
        assert.match(warnings[0], /^Job endpoint items: parameters\.api\.pagination\.totalPath total /);
        assert.match(warnings[0], /ignored: the job pages on until a short or empty page/);
        // prediction as without a total: bounded by what the client asks for
        assert.equal(paginator.predict!(job, 3).length, 3);
        assert.equal(paginator.expectedRecords!(), undefined);
        assert.equal(paginator.next(job, page(records(1))) instanceof Stop, true, 'the natural end still applies');
        // the same problem in the next job instance (a child copy) is not warned again
        const child = paginator.clone();
        child.first(job);
        child.next(job, pageOfText(text));
        assert.equal(warnings.length, 1);
      });
    }

    it('accepted: a whole float (100.0) and a digit string ("100")', () => {
      for (const text of [
        '{"total":4.0,"items":[1,2]}',
        '{"total":" 4 ","items":[1,2]}',
        '{"total":"4","items":[1,2]}',
      ]) {
        const { paginator, warnings } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPath: 'total' });
        paginator.first(job);
        paginator.next(job, pageOfText(text));
        assert.deepEqual(warnings, []);
        assert.equal(paginator.next(job, page(records(2))) instanceof Stop, true, text);
      }
    });

    it('a huge but countable total: pages on to the natural end, prediction bounded by what is asked', () => {
      const { paginator, warnings } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPagesPath: 'pages' });
      paginator.first(job);
      paginator.next(job, page(records(2, { pages: Number.MAX_SAFE_INTEGER })));
      assert.deepEqual(warnings, []);
      assert.equal(paginator.predict!(job, 7).length, 7);
      assert.equal((paginator.next(job, page(records(0))) as Stop).code, 'underflow');
    });

    it('a hostile value is cut and escaped in the warning', () => {
      const { paginator, warnings } = paginatorWithWarnings({ method: 'pagenum', limit: 2, totalPath: 'total' });
      paginator.first(jobRequest('a\nb'));
      paginator.next(jobRequest('a\nb'), page({ total: `\u001b[31m\u202e${'x'.repeat(100_000)}`, items: [1, 2] }));
      assert.equal(warnings.length, 1);
      assert.ok(warnings[0].length < 400, `short: ${warnings[0].length} characters`);
      assert.doesNotMatch(warnings[0], /[\n\u001b\u202e]/);
      assert.match(warnings[0], /Job endpoint "a\\nb"/);
      assert.match(warnings[0], /"\\u001b\[31m\\u202exxx+…"/);
    });

    it('readTotal: a path through lists and objects, as limitStop.field', () => {
      assert.deepEqual(readTotal(fromPlain({ meta: [{ count: 7 }] }), 'meta.0.count'), { total: 7 });
      assert.deepEqual(readTotal(fromPlain(12), '.'), { total: 12 });
    });
  });

  describe('configuration', () => {
    const refused = (config: Record<string, unknown>, path: string, message: RegExp) => {
      assert.throws(
        () => createPaginator(fromPlain(config)),
        (e: Error) => e instanceof ConfigError && e.message.includes(path) && message.test(e.message),
        JSON.stringify(config),
      );
    };

    it('both keys at once name both', () => {
      refused(
        { method: 'pagenum', totalPath: 'a', totalPagesPath: 'b' },
        'parameters.api.pagination',
        /has both 'totalPath' and 'totalPagesPath'.*Keep one/,
      );
    });

    it('a wrong type names the key and how to write it', () => {
      for (const value of [5, true, { path: 'a' }, ['a']]) {
        refused(
          { method: 'offset', limit: 5, totalPath: value },
          'parameters.api.pagination.totalPath',
          /must be a string.*e\.g\. "meta\.total"/,
        );
        refused(
          { method: 'pagenum', totalPagesPath: value },
          'parameters.api.pagination.totalPagesPath',
          /must be a string/,
        );
      }
    });

    it('a method whose pages are not numbered refuses it', () => {
      refused(
        { method: 'cursor', idKey: 'id', param: 'since', totalPath: 'total' },
        'parameters.api.pagination.totalPath',
        /works with pagenum and offset only, not with method "cursor"/,
      );
      refused(
        { method: 'response.url', totalPagesPath: 'pages' },
        'parameters.api.pagination.totalPagesPath',
        /not with method "response\.url"/,
      );
      refused({ totalPath: 'total' }, 'parameters.api.pagination.totalPath', /not with no pagination method/);
      refused(
        { method: 'multiple', scrollers: { a: { method: 'pagenum' } }, totalPath: 'total' },
        'parameters.api.pagination.totalPath',
        /inside such a scroller/,
      );
    });

    it('empty or null is off; a scroller of multiple may have it', () => {
      assert.doesNotThrow(() => createPaginator(fromPlain({ method: 'pagenum', totalPath: '', totalPagesPath: null })));
      const multiple = createPaginator(
        fromPlain({
          method: 'multiple',
          scrollers: { a: { method: 'pagenum', limit: 1, totalPagesPath: 'pages' } },
          default: 'a',
        }),
      );
      const { requests, stop } = run(multiple, job, [records(1, { pages: 2 }), records(1), records(1)]);
      assert.equal(requests.length, 2);
      assert.equal(stop?.code, 'total');
      multiple.first(job);
      multiple.next(job, page(records(1, { pages: 5 })));
      assert.equal(multiple.expectedRecords!(), 5);
    });
  });
});
