import assert from 'node:assert/strict';
import { fromPlain } from '../../../src/json/index.js';
import { createPaginator } from '../../../src/extractor/pagination/factory.js';
import { CAP_CODES, NATURAL_END_CODES, Stop, type StopCode } from '../../../src/extractor/pagination/paginator.js';
import { ForceStop } from '../../../src/extractor/pagination/stop-conditions/force-stop.js';
import { jobRequest, page } from '../../support/pagination.js';

/** The code of the stop a paginator gives after `responses`, page by page. */
function stopCodeOf(config: Record<string, unknown>, responses: unknown[]): StopCode {
  const paginator = createPaginator(fromPlain(config));
  const job = jobRequest('items');
  paginator.first(job);
  for (const response of responses) {
    const next = paginator.next(job, page(response));
    if (next instanceof Stop) return next.code;
  }
  throw new Error('no stop');
}

const two = { items: [{ id: 1 }, { id: 2 }] };

describe('stop codes (stoppedBy)', () => {
  const cases: Array<[string, Record<string, unknown>, unknown[], StopCode]> = [
    ['no pagination', {}, [two], 'noPagination'],
    ['pagenum underflow', { method: 'pagenum', limit: 5 }, [two], 'underflow'],
    ['pagenum without a limit, empty page', { method: 'pagenum' }, [two, { items: [] }], 'emptyPage'],
    ['offset underflow', { method: 'offset', limit: 5 }, [two], 'underflow'],
    ['cursor empty page', { method: 'cursor', idKey: 'id', param: 'since' }, [two, { items: [] }], 'emptyPage'],
    ['response.url without a next URL', { method: 'response.url' }, [two], 'noNextPage'],
    [
      'response.param without a value',
      { method: 'response.param', responseParam: 'next', queryParam: 'p' },
      [two],
      'noNextPage',
    ],
    [
      'nextPageFlag',
      { method: 'pagenum', limit: 2, nextPageFlag: { field: 'more', stopOn: false } },
      [{ more: false, ...two }],
      'nextPageFlag',
    ],
    ['forceStop.pages', { method: 'pagenum', limit: 2, forceStop: { pages: 1 } }, [two], 'forceStop.pages'],
    ['forceStop.volume', { method: 'pagenum', limit: 2, forceStop: { volume: 10 } }, [two], 'forceStop.volume'],
    ['limitStop.count', { method: 'pagenum', limit: 2, limitStop: { count: 2 } }, [two], 'limitStop.count'],
    [
      'limitStop.field',
      { method: 'pagenum', limit: 2, limitStop: { field: 'total' } },
      [{ total: 2, ...two }],
      'limitStop.field',
    ],
    [
      'limitStop.field missing',
      { method: 'pagenum', limit: 2, limitStop: { field: 'total' } },
      [two],
      'limitStop.field',
    ],
    ['total', { method: 'pagenum', limit: 2, totalPagesPath: 'pages' }, [{ pages: 1, ...two }], 'total'],
  ];
  for (const [name, config, responses, code] of cases) {
    it(`${name} → ${code}`, () => assert.equal(stopCodeOf(config, responses), code));
  }

  it('forceStop.time', () => {
    let now = 1_000_000;
    const force = new ForceStop(
      createPaginator(fromPlain({ method: 'pagenum', limit: 2 })),
      { pages: null, time: 60, volume: null },
      () => now,
    );
    force.first(jobRequest());
    now += 61_000;
    const stop = force.next(jobRequest(), page(two));
    assert.ok(stop instanceof Stop);
    assert.equal(stop.code, 'forceStop.time');
  });

  it('caps read distinctly from natural ends in the log', () => {
    for (const code of CAP_CODES) {
      const stop = new Stop('why', code);
      assert.equal(stop.cap, true);
      assert.equal(stop.describe(), `stopped by cap ${code} (why)`);
    }
    for (const code of NATURAL_END_CODES) {
      const stop = new Stop('why', code);
      assert.equal(stop.cap, false);
      assert.equal(stop.describe(), 'stopped: why');
    }
  });
});
