import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/common/errors.js';
import { paginatorFor } from '../../support/pagination.js';

/** Configuration errors of pagination methods and stop conditions: each names its JSON path. */
describe('pagination configuration errors', () => {
  const P = 'Invalid configuration at parameters.api.pagination';
  const fails = (config: Record<string, unknown>, message: string) =>
    assert.throws(
      () => paginatorFor(config),
      (e: Error) => e instanceof ConfigError && e.message.startsWith(message),
      `${JSON.stringify(config)} should fail with ${message}`,
    );

  it('unknown method', () => {
    fails(
      { method: 'pages' },
      `${P}.method: unknown pagination method 'pages'. Use one of pagenum, offset, response.url`,
    );
    fails({ method: 5 }, `${P}.method: unknown pagination method '5'`);
  });

  it('nextPageFlag', () => {
    fails({ method: 'pagenum', nextPageFlag: { stopOn: false } }, `${P}.nextPageFlag.field: is required`);
    fails({ method: 'pagenum', nextPageFlag: { field: 'more' } }, `${P}.nextPageFlag.stopOn: is required`);
    fails(
      { method: 'pagenum', nextPageFlag: { field: 'more', stopOn: 'false' } },
      `${P}.nextPageFlag.stopOn: must be true or false, got "false"`,
    );
    fails(
      { method: 'pagenum', nextPageFlag: { field: 'more', stopOn: 0 } },
      `${P}.nextPageFlag.stopOn: must be true or false, got 0`,
    );
    fails(
      { method: 'pagenum', nextPageFlag: { field: 'more', stopOn: true, ifNotSet: 'yes' } },
      `${P}.nextPageFlag.ifNotSet: must be true or false, got "yes"`,
    );
    fails({ method: 'pagenum', nextPageFlag: true }, `${P}.nextPageFlag: must be an object, got true`);
  });

  it('forceStop (type errors GE crashes on are configuration errors here)', () => {
    fails({ method: 'pagenum', forceStop: { pages: '2' } }, `${P}.forceStop.pages: must be an integer, got "2"`);
    fails({ method: 'pagenum', forceStop: { pages: 2.5 } }, `${P}.forceStop.pages: must be an integer, got 2.5`);
    fails(
      { method: 'pagenum', forceStop: { time: 1.5 } },
      `${P}.forceStop.time: must be whole seconds or a time span, got 1.5`,
    );
    fails(
      { method: 'pagenum', forceStop: { time: true } },
      `${P}.forceStop.time: must be whole seconds or a time span, got true`,
    );
  });

  it('limitStop', () => {
    fails({ method: 'pagenum', limitStop: { count: 0 } }, `${P}.limitStop: needs one of 'field' or 'count'`);
    fails(
      { method: 'pagenum', limitStop: { field: 'total', count: 5 } },
      `${P}.limitStop: has both 'field' and 'count'`,
    );
    fails({ method: 'pagenum', limitStop: { field: 5 } }, `${P}.limitStop.field: must be a string, got 5`);
  });

  it('PHP-empty stop conditions are off, as in GE', () => {
    for (const empty of [null, false, 0, '', {}, []]) {
      assert.equal(
        paginatorFor({ method: 'pagenum', nextPageFlag: empty, forceStop: empty, limitStop: empty }).describe({
          endpoint: 'x',
          params: new Map(),
          method: 'GET',
        }),
        'pagenum (page=1.., no limit)',
      );
    }
  });

  it('cursor', () => {
    fails({ method: 'cursor', param: 'since' }, `${P}.idKey: is required`);
    fails({ method: 'cursor', idKey: 'id' }, `${P}.param: is required`);
    fails(
      { method: 'cursor', idKey: 'id', param: 'since', increment: '1' },
      `${P}.increment: must be an integer, got "1"`,
    );
    fails({ method: 'cursor', idKey: { a: 1 }, param: 'since' }, `${P}.idKey: must be a string, got an object`);
  });

  it('response.url and response.param', () => {
    fails({ method: 'response.url', delimiter: '' }, `${P}.delimiter: must be a non-empty string, got ""`);
    fails({ method: 'response.param', queryParam: 'page' }, `${P}.responseParam: is required`);
    fails({ method: 'response.param', responseParam: 'next' }, `${P}.queryParam: is required`);
    const param = { method: 'response.param', responseParam: 'next', queryParam: 'page' };
    fails({ ...param, scrollRequest: 'results' }, `${P}.scrollRequest: must be an object, got "results"`);
    fails({ ...param, scrollRequest: { method: 'PUT' } }, `${P}.scrollRequest.method: unknown method "PUT"`);
    fails(
      { ...param, scrollRequest: { endpoint: 5 } },
      `${P}.scrollRequest.endpoint: must be a non-empty string, got 5`,
    );
    fails(
      { ...param, scrollRequest: { endpoint: 'r', headers: { A: 'b' } } },
      `${P}.scrollRequest.headers: is not supported by this version of gex`,
    );
  });

  it('multiple: paths name the scroller', () => {
    fails({ method: 'multiple' }, `${P}.scrollers: needs at least one scroller for "multiple" pagination`);
    fails({ method: 'multiple', scrollers: { search: 'pagenum' } }, `${P}.scrollers.search: must be an object`);
    fails(
      { method: 'multiple', scrollers: { search: { method: 'page' } } },
      `${P}.scrollers.search.method: unknown pagination method 'page'`,
    );
    fails(
      { method: 'multiple', scrollers: { search: { method: 'offset' } } },
      `${P}.scrollers.search.limit: is required for offset pagination`,
    );
    fails(
      { method: 'multiple', scrollers: { search: { method: 'pagenum', forceStop: { pages: 'x' } } } },
      `${P}.scrollers.search.forceStop.pages: must be an integer, got "x"`,
    );
  });

  it('an empty scroller of multiple is no pagination', () => {
    const paginator = paginatorFor({ method: 'multiple', scrollers: { none: {} }, default: 'none' });
    assert.equal(
      paginator.describe({ endpoint: 'x', params: new Map(), method: 'GET' }),
      "multiple: 'none' → no pagination",
    );
  });
});
