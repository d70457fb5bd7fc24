import assert from 'node:assert/strict';
import { findRecords } from '../../../src/extractor/response/data-field.js';
import { applyResponseFilter } from '../../../src/extractor/response/response-filter.js';
import { decodeJson, type JsonValue } from '../../../src/json/index.js';
import { phpJsonEncode } from '../../../src/php/index.js';

const json = (text: string) => decodeJson(text);
const encode = (v: JsonValue) => phpJsonEncode(v);

describe('finding records (dataField)', () => {
  it('follows dotted paths, list indexes and custom delimiters', () => {
    const response = json('{"a":{"b":[{"c":[1,2]}]},"x|y":{"z":[3]}}');
    assert.equal(encode(findRecords(response, { path: 'a.b.0.c', delimiter: '.' }).records), '[1,2]');
    assert.equal(encode(findRecords(json('{"x.y":{"z":[3]}}'), { path: 'x.y|z', delimiter: '|' }).records), '[3]');
  });

  it('wraps an object (or scalar) in a one-element list; "." is the whole response', () => {
    assert.equal(
      encode(findRecords(json('{"user":{"id":1}}'), { path: 'user', delimiter: '.' }).records),
      '[{"id":1}]',
    );
    assert.equal(encode(findRecords(json('{"id":1}'), { path: '.', delimiter: '.' }).records), '[{"id":1}]');
    assert.equal(encode(findRecords(json('{"count":5}'), { path: 'count', delimiter: '.' }).records), '[5]');
  });

  it('warns and yields nothing for a missing or empty value', () => {
    for (const body of ['{}', '{"d":null}', '{"d":[]}', '{"d":""}', '{"d":0}', '{"d":"0"}', '{"d":false}']) {
      const found = findRecords(json(body), { path: 'd', delimiter: '.' });
      assert.deepEqual(found.records, []);
      assert.equal(found.warning, "dataField 'd' contains no data!");
    }
  });

  it('calls the warning news only when the response holds data elsewhere and nothing is at the path', () => {
    const news = (body: string) => findRecords(json(body), { path: 'd', delimiter: '.' }).news;
    // an API saying "no records": an empty value at the path, or nothing at all in the answer
    const saysNone = [
      '{}',
      '[]',
      '{"d":[]}',
      '{"d":null,"total":0}',
      '{"next":null,"meta":{}}',
      '{"d":[],"meta":{"page":1}}',
    ];
    for (const body of saysNone) {
      assert.equal(news(body), false, body);
    }
    // records that are there, only not where dataField points
    for (const body of ['{"data":[{"id":1}]}', '[{"id":1}]', '{"total":3}']) assert.equal(news(body), true, body);
  });

  it('without dataField uses a list response or its only top-level list', () => {
    assert.equal(encode(findRecords(json('[{"id":1}]'), null).records), '[{"id":1}]');
    assert.equal(encode(findRecords(json('{"meta":{"x":[1]},"items":[2]}'), null).records), '[2]');
    assert.equal(findRecords(json('{"meta":{}}'), null).warning, 'No data array found in response!');
    assert.throws(
      () => findRecords(json('{"a":[],"b":[]}'), null),
      /More than one array found in response \('a', 'b'\)! Use 'dataField'/,
    );
    assert.throws(() => findRecords(json('"text"'), null), /Unknown response from API/);
  });
});

describe('responseFilter', () => {
  const filtered = (rows: string, filters: string[], delimiter = '.', compat = 3) => {
    const records = json(rows) as JsonValue[];
    const before = encode(records);
    const result = applyResponseFilter(records, filters, delimiter, compat);
    assert.equal(encode(records), before, 'the input records stay untouched');
    return encode(result);
  };

  it('freezes values as JSON text (compat 3 quotes strings)', () => {
    assert.equal(filtered('[{"a":"green","b":{"c":[1]}}]', ['a', 'b']), '[{"a":"\\"green\\"","b":"{\\"c\\":[1]}"}]');
  });

  it('walks into list elements with []', () => {
    assert.equal(filtered('[{"c":[{"p":{"x":1}},{"q":1}]}]', ['c[].p']), '[{"c":[{"p":"{\\"x\\":1}"},{"q":1}]}]');
  });

  it('leaves records without the property and paths through scalars alone', () => {
    assert.equal(filtered('[{"x":1},{"m":true}]', ['m.some']), '[{"x":1},{"m":true}]');
  });

  it('compat level 2 stringifies scalars and skips empty values', () => {
    assert.equal(
      filtered('[{"a":"green","b":null,"c":true,"d":[1]}]', ['a', 'b', 'c', 'd'], '.', 2),
      '[{"a":"green","b":null,"c":"1","d":"[1]"}]',
    );
  });

  it('uses a custom delimiter so keys may contain dots', () => {
    assert.equal(filtered('[{"s.a":{"tags":[1]}}]', ['s.a#tags'], '#'), '[{"s.a":{"tags":"[1]"}}]');
  });

  it('fails when [] is used on something that is not a list', () => {
    assert.throws(() => filtered('[{"c":{"p":1}}]', ['c[].p']), /'c' is not an array/);
  });
});
