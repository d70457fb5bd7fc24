import assert from 'node:assert/strict';
import { UserError } from '../../../src/common/errors.js';
import { toPlain } from '../../../src/json/index.js';
import { Stop } from '../../../src/extractor/pagination/paginator.js';
import { ZendeskResponseUrlPaginator } from '../../../src/extractor/pagination/zendesk-response-url.js';
import { drive, ids, jobRequest, page, paginatorFor, plainRequest, show } from '../../support/pagination.js';

/** The pagination methods driven directly: state, type juggling and GE's reset rules. */
describe('pagination methods', () => {
  describe('pagenum and offset state (GE: first() uses the current state)', () => {
    it('pagenum: first() continues from the current page; reset() and clone() start again', () => {
      const paginator = paginatorFor({ method: 'pagenum', limit: 2 });
      const job = jobRequest();
      assert.deepEqual(drive(paginator, job, [ids(1, 2)]).requests, ['users?page=1&limit=2', 'users?page=2&limit=2']);
      assert.equal(show(paginator.first(job)), 'users?page=2&limit=2');
      assert.equal(show(paginator.clone().first(job)), 'users?page=1&limit=2');
      paginator.reset();
      assert.equal(show(paginator.first(job)), 'users?page=1&limit=2');
    });

    it("pagenum: the method's own stop resets the page", () => {
      const paginator = paginatorFor({ method: 'pagenum', limit: 2 });
      const run = drive(paginator, jobRequest(), [ids(1, 2), ids(3)]);
      assert.match(run.stop!, /underflow/);
      assert.equal(show(paginator.first(jobRequest())), 'users?page=1&limit=2');
    });

    it('offset: first() keeps the current offset unless the job sets one (offsetFromJob)', () => {
      const paginator = paginatorFor({ method: 'offset', limit: 2, offsetFromJob: true });
      drive(paginator, jobRequest(), [ids(1, 2)]);
      assert.equal(show(paginator.first(jobRequest())), 'users?limit=2&offset=2');
      assert.equal(show(paginator.first(jobRequest('users', { offset: 7 }))), 'users?offset=7&limit=2');
      assert.equal(show(paginator.clone().first(jobRequest())), 'users?limit=2&offset=0');
    });
  });

  describe('response.url', () => {
    it('next request: the URL as endpoint, params dropped unless includeParams, method kept', () => {
      const job = jobRequest('search', { q: 'x' }, 'POST');
      const next = (pagination: Record<string, unknown>) =>
        plainRequest(paginatorFor(pagination).next(job, page({ next_page: 'search?page=2' })));
      assert.deepEqual(next({ method: 'response.url' }), { endpoint: 'search?page=2', method: 'POST', params: {} });
      // "false" is a true PHP bool
      assert.deepEqual(next({ method: 'response.url', includeParams: 'false' }), {
        endpoint: 'search?page=2',
        method: 'POST',
        params: { q: 'x' },
      });
    });

    it('paramIsQuery: the job endpoint with the parsed query overlaid (response wins, job keys keep their place)', () => {
      const paginator = paginatorFor({ method: 'response.url', paramIsQuery: true, includeParams: true });
      const next = paginator.next(jobRequest('users', { page: 'start', a: 1 }), page({ next_page: '?b=2&page=3' }));
      assert.equal(show(next), 'users?page=3&a=1&b=2');
    });

    it('paramIsQuery parses like Guzzle: lists for repeated keys, null for bare keys (a bare key then a value: the value)', () => {
      const paginator = paginatorFor({ method: 'response.url', paramIsQuery: true });
      const next = plainRequest(paginator.next(jobRequest(), page({ next_page: 'ids=1&ids=2&bare&x&x=a+b%21' })));
      assert.deepEqual(next.params, { ids: ['1', '2'], bare: null, x: 'a b!' });
    });

    it('urlKey is a path with a custom delimiter', () => {
      const paginator = paginatorFor({ method: 'response.url', urlKey: 'links/next', delimiter: '/' });
      assert.equal(show(paginator.next(jobRequest(), page({ links: { next: 'users?p=2' } }))), 'users?p=2');
    });

    for (const [value, reason] of [
      [false, 'links.next is false'],
      [null, 'links.next is null'],
      ['0', 'links.next is "0"'],
      [undefined, 'links.next is not in the response'],
    ] as const) {
      it(`stops when the URL is ${String(value)}, saying why`, () => {
        const links = value === undefined ? {} : { next: value };
        const next = paginatorFor({ method: 'response.url', urlKey: 'links.next' }).next(jobRequest(), page({ links }));
        assert.ok(next instanceof Stop);
        assert.equal(next.reason, `response.url: no next page (${reason})`);
      });
    }

    it('an empty object is not PHP-empty in a response: it is refused as a URL', () => {
      assert.throws(
        () => paginatorFor({ method: 'response.url' }).next(jobRequest(), page({ next_page: {} })),
        /must be a string, got \{\}/,
      );
    });
  });

  describe('zendesk.response.url', () => {
    const now = 1_700_000_000;
    const paginator = new ZendeskResponseUrlPaginator(
      { urlKey: 'next_page', delimiter: '.', includeParams: false, paramIsQuery: false },
      () => now * 1000,
    );
    const next = (url: string) => paginator.next(jobRequest('tickets'), page({ next_page: url }));

    it('goes on while start_time is at least 6 minutes old', () => {
      assert.equal(
        show(next(`https://z.example/tickets?start_time=${now - 360}`)),
        `https://z.example/tickets?start_time=${now - 360}`,
      );
      assert.ok(!(next(`tickets?start_time=${now - 3600}&cursor=x`) instanceof Stop));
    });

    it('stops when start_time is later than now - 6 minutes', () => {
      const stop = next(`tickets?start_time=${now - 359}`);
      assert.ok(stop instanceof Stop);
      assert.equal(stop.reason, `zendesk.response.url: the next start_time ${now - 359} is less than 6 minutes ago`);
    });

    it('ignores a start_time that is missing, "0" or not a number', () => {
      for (const url of [
        'tickets?cursor=1',
        'tickets?start_time=0',
        'tickets?start_time=soon',
        `tickets?start_time=${now}x`,
      ]) {
        assert.ok(!(next(url) instanceof Stop), url);
      }
    });
  });

  describe('response.param', () => {
    it('sends the value as it is, the only param without includeParams', () => {
      const paginator = paginatorFor({ method: 'response.param', responseParam: 'meta.next', queryParam: 'page' });
      assert.deepEqual(
        plainRequest(paginator.next(jobRequest('users', { q: 'x' }), page({ meta: { next: 2 } }))).params,
        { page: 2 },
      );
      const object = paginator.next(jobRequest(), page({ meta: { next: { a: 1 } } }));
      assert.equal(show(object), 'users?page%5Ba%5D=1');
    });

    it('stops on a PHP-empty value (0, "", false) with the reason', () => {
      const paginator = paginatorFor({ method: 'response.param', responseParam: 'next', queryParam: 'page' });
      for (const value of [0, '', false, []]) {
        const stop = paginator.next(jobRequest(), page({ next: value }));
        assert.ok(stop instanceof Stop);
        assert.match(stop.reason, /^response\.param: no next page \(next is /);
      }
    });

    it('scrollRequest replaces endpoint and method for the next pages', () => {
      const paginator = paginatorFor({
        method: 'response.param',
        responseParam: 't',
        queryParam: 'token',
        scrollRequest: { endpoint: 'scroll', method: 'form' },
      });
      assert.equal(
        show(paginator.next(jobRequest('search', { q: 1 }, 'POST'), page({ t: 'abc' }))),
        'FORM scroll?token=abc',
      );
    });
  });

  describe('cursor', () => {
    const cursor = (extra: Record<string, unknown> = {}) =>
      paginatorFor({ method: 'cursor', idKey: 'id', param: 'since', ...extra });

    it('writes the cursor into the job params permanently (existing key keeps its place)', () => {
      const job = jobRequest('users', { since: 0, q: 'x' });
      const next = cursor().next(job, page(ids(5, 9, 7)));
      assert.equal(show(next), 'users?since=9&q=x');
      assert.deepEqual(toPlain(job.params), { since: 9, q: 'x' });
    });

    it('keeps max and min across pages; reverse and increment', () => {
      assert.deepEqual(drive(cursor(), jobRequest(), [ids(10, 20), ids(5, 15), ids()]).requests, [
        'users',
        'users?since=20',
        'users?since=20',
      ]);
      assert.deepEqual(
        drive(cursor({ reverse: true, increment: -1 }), jobRequest(), [ids(10, 20), ids(15, 12), ids(3)]).requests,
        ['users', 'users?since=9', 'users?since=9', 'users?since=2'],
      );
    });

    it('an empty page stops and resets: the next job starts from its own ids', () => {
      const paginator = cursor();
      const run = drive(paginator, jobRequest(), [ids(100), ids()]);
      assert.equal(run.stop, 'cursor: empty page');
      assert.equal(show(paginator.next(jobRequest(), page(ids(3)))), 'users?since=3');
    });

    it('casts ids like PHP (int): numeric strings, floats, exponents, int64', () => {
      const next = (...values: unknown[]) => show(cursor().next(jobRequest(), page(ids(...values))));
      assert.equal(next('12', ' 30'), 'users?since=30');
      assert.equal(next(12.9), 'users?since=12');
      assert.equal(next('1e3'), 'users?since=1000');
      assert.equal(next('9223372036854775806', '9223372036854775807'), 'users?since=9223372036854775807');
      assert.equal(
        show(cursor().next(jobRequest(), page('{"items":[{"id":1234567890123456789}]}'))),
        'users?since=1234567890123456789',
      );
    });

    it('reads idKey as a path in each record', () => {
      const paginator = paginatorFor({ method: 'cursor', idKey: 'meta.id', param: 'after' });
      assert.equal(show(paginator.next(jobRequest(), page({ items: [{ meta: { id: 4 } }] }))), 'users?after=4');
    });

    for (const [value, shown] of [
      ['abc', '"abc"'],
      ['12 ', '"12 "'],
      [true, 'true'],
      [null, 'null'],
      [undefined, 'null'],
    ] as const) {
      it(`a non-numeric id (${shown}) is GE's user error`, () => {
        const record = value === undefined ? {} : { id: value };
        assert.throws(
          () => cursor().next(jobRequest(), page({ items: [record] })),
          (e: Error) => e instanceof UserError && e.message === `Cursor value '${shown}' is not numeric.`,
        );
      });
    }
  });

  describe('multiple', () => {
    const config = {
      method: 'multiple',
      scrollers: { pages: { method: 'pagenum' }, offsets: { method: 'offset', limit: 5 } },
      default: 'offsets',
    };

    it('picks the job scroller, else the default', () => {
      assert.equal(show(paginatorFor(config, 'pages').first(jobRequest())), 'users?page=1');
      assert.equal(show(paginatorFor(config).first(jobRequest())), 'users?limit=5&offset=0');
    });

    it("a request's own scroller (a child job's) takes precedence over the one it was made for", () => {
      const paginator = paginatorFor(config, 'pages');
      assert.equal(show(paginator.first({ ...jobRequest(), scroller: null })), 'users?limit=5&offset=0');
      assert.equal(show(paginator.first({ ...jobRequest(), scroller: 'offsets' })), 'users?limit=5&offset=0');
    });

    it('no scroller and no default: no pagination', () => {
      const paginator = paginatorFor({ method: 'multiple', scrollers: { pages: { method: 'pagenum' } } });
      assert.equal(show(paginator.first(jobRequest())), 'users');
      assert.ok(paginator.next(jobRequest(), page(ids(1))) instanceof Stop);
    });

    it('an unknown default fails when a job uses it', () => {
      const paginator = paginatorFor({ ...config, default: 'nope' }, 'pages');
      assert.equal(show(paginator.first(jobRequest())), 'users?page=1');
      assert.throws(
        () => paginatorFor({ ...config, default: 'nope' }).first(jobRequest()),
        /pagination\.default: names the scroller 'nope', which does not exist \(scrollers defined: pages, offsets\)/,
      );
    });

    it('reset() resets every scroller; clone() copies them fresh', () => {
      const paginator = paginatorFor(config, 'pages');
      drive(paginator, jobRequest(), [ids(1)]);
      assert.equal(show(paginator.first(jobRequest())), 'users?page=2');
      assert.equal(show(paginator.clone().first(jobRequest())), 'users?page=1');
      paginator.reset();
      assert.equal(show(paginator.first(jobRequest())), 'users?page=1');
    });
  });
});
