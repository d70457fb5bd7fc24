import assert from 'node:assert/strict';
import { mergeRowConfiguration } from '../../src/runner/effective-configuration.js';
import { decodeJson, stringifyExact } from '../../src/json/index.js';

/** Keboola's array_replace_recursive merge of root and row (docs/design.md#merged-configuration). */
describe('row configuration merge', () => {
  const merge = (root: string, row: string) => stringifyExact(mergeRowConfiguration(decodeJson(root), decodeJson(row)));

  it('merges objects key by key, the row winning', () => {
    assert.equal(
      merge(
        '{"parameters":{"api":{"baseUrl":"https://a","headers":{"X":"1"}}}}',
        '{"parameters":{"api":{"headers":{"Y":"2"}}}}',
      ),
      '{"parameters":{"api":{"baseUrl":"https://a","headers":{"X":"1","Y":"2"}}}}',
    );
    assert.equal(
      merge(
        '{"parameters":{"credentials":{"username":"user","#password":"p"}}}',
        '{"parameters":{"credentials":{"username":"override"},"key":"val"}}',
      ),
      '{"parameters":{"credentials":{"username":"override","#password":"p"},"key":"val"}}',
    );
  });

  it('merges lists index by index; an empty row list changes nothing', () => {
    assert.equal(
      merge('{"parameters":{"ids":[1,2,3]}}', '{"parameters":{"ids":[9]}}'),
      '{"parameters":{"ids":[9,2,3]}}',
    );
    assert.equal(
      merge('{"parameters":{"ids":[1,2,3]}}', '{"parameters":{"ids":[]}}'),
      '{"parameters":{"ids":[1,2,3]}}',
    );
    assert.equal(
      merge('{"jobs":[{"endpoint":"a","params":{"x":1}},{"endpoint":"b"}]}', '{"jobs":[{"endpoint":"c"}]}'),
      '{"jobs":[{"endpoint":"c","params":{"x":1}},{"endpoint":"b"}]}',
    );
  });

  it('lets a row null or scalar replace a root object', () => {
    assert.equal(merge('{"parameters":{"x":{"a":1}}}', '{"parameters":{"x":null}}'), '{"parameters":{"x":null}}');
    assert.equal(merge('{"parameters":{"x":{"a":1}}}', '{"parameters":{"x":"flat"}}'), '{"parameters":{"x":"flat"}}');
  });
});
