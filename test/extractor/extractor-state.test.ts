import assert from 'node:assert/strict';
import { ExtractorState, stateFileText } from '../../src/extractor/extractor-state.js';
import { StructState } from '../../src/extractor/output/record-parser.js';
import { decodeJson, stringifyExact, type JsonObject } from '../../src/json/index.js';

const state = (text: string) => decodeJson(text) as JsonObject;

describe('extractor state', () => {
  it('gives user functions previousStart of the input (0 when empty) and this run start', () => {
    const context = (input: string) => stringifyExact(new ExtractorState(state(input), 1700000000).timeContext());
    assert.equal(context('{}'), '{"previousStart":0,"currentStart":1700000000}');
    assert.equal(context('{"time":{"previousStart":"12"}}'), '{"previousStart":12,"currentStart":1700000000}');
    assert.equal(context('{"time":[]}'), '{"previousStart":0,"currentStart":1700000000}');
  });

  it('reads the input structure with its version, null when the input has none', () => {
    assert.equal(new ExtractorState(state('{}'), 1).inputStruct(), undefined);
    const versioned = new ExtractorState(
      state('{"json_parser.struct":{"a":1},"json_parser.structVersion":2.0}'),
      1,
    ).inputStruct();
    assert.equal(stringifyExact(versioned!.struct), '{"a":1}');
    assert.equal(stringifyExact(versioned!.version), '2.0');
    assert.equal(new ExtractorState(state('{"json_parser.struct":{"a":1}}'), 1).inputStruct()!.version, null);
  });

  it('leaves the input keys in order, previousStart updated, currentStart dropped, the structure set once', () => {
    const input = state(
      '{"custom":{"a":1},"json_parser.struct":{"old":1},"time":{"previousStart":5,"currentStart":6}}',
    );
    const out = new ExtractorState(input, 7).output(new StructState(decodeJson('{"old":1,"new":2}'), 3));
    assert.equal(
      stateFileText(out),
      '{"custom":{"a":1},"json_parser.struct":{"old":1,"new":2},"time":{"previousStart":7},"json_parser.structVersion":3}',
    );
  });

  it('keeps the input parser keys when no structure was learned (mappings)', () => {
    const input = state('{"json_parser.struct":{"x":1},"json_parser.structVersion":3}');
    assert.equal(
      stateFileText(new ExtractorState(input, 2).output(undefined)),
      '{"json_parser.struct":{"x":1},"json_parser.structVersion":3,"time":{"previousStart":2}}',
    );
  });

  it('returns the state as its file reads back, and writing that again gives the same bytes', () => {
    const odd = [
      '{"e":{},"l":[],"seq":{"0":"a","1":"b"},"gap":{"1":"a"}}',
      '{"f":[1.0,-0.0,0.1,1e300,5e-324,1e15,123456789.125],"big":[9223372036854775807,9223372036854775808,-123456789012345678901234]}',
      '{"s":"\\u2028 é / \\" \\\\ \\u0000 😀","nested":{"a":{"b":{"c":{}}}}}',
    ];
    for (const text of odd) {
      const out = new ExtractorState(state(text), 1).output(undefined);
      const once = stateFileText(out);
      assert.equal(stateFileText(decodeJson(once)), once, text);
      assert.ok(Array.isArray(out.get('e') ?? []), 'an empty object reads back as a list');
    }
  });

  it('masks secrets an API echoed into the state before encoding', () => {
    const out = new ExtractorState(state('{"token":"s3cr3t"}'), 1).output(undefined, (value) =>
      decodeJson(JSON.stringify(JSON.parse(stringifyExact(value))).replaceAll('s3cr3t', '[hidden]')),
    );
    assert.equal(stateFileText(out), '{"token":"[hidden]","time":{"previousStart":1}}');
  });
});
