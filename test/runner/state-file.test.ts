import assert from 'node:assert/strict';
import { fromPlain, toPlain, type JsonObject } from '../../src/json/index.js';
import { stateAsInFolder } from '../../src/runner/stored-state.js';

describe("a row's out/state.json (stateAsInFolder)", () => {
  const plain = fromPlain({
    '#token': 'plain-secret',
    nested: { '#key': 'inner-secret', list: [{ '#x': 'in-list' }] },
    time: { previousStart: 1 },
  });
  const stored = fromPlain({
    '#token': 'KBC::ProjectSecure::a',
    nested: { '#key': 'KBC::ProjectSecure::b', list: [{ '#x': 'KBC::ProjectSecure::c' }] },
    time: { previousStart: 1 },
  });

  it("writes a decrypted secret back in the form the folder's in/state.json holds (as GE carries its input over)", () => {
    const output = fromPlain({
      '#token': 'plain-secret',
      nested: { '#key': 'inner-secret', list: [{ '#x': 'in-list' }] },
      time: { previousStart: 99 },
    }) as JsonObject;
    assert.deepEqual(toPlain(stateAsInFolder(output, plain, stored)), {
      '#token': 'KBC::ProjectSecure::a',
      nested: { '#key': 'KBC::ProjectSecure::b', list: [{ '#x': 'KBC::ProjectSecure::c' }] },
      time: { previousStart: 99 },
    });
  });

  it("hides a # value that is not the input's (the plaintext never reaches the disk), keeps other values", () => {
    const output = fromPlain({ '#token': 'another-secret', '#new': 'x', plain: 'plain-secret', n: 1 }) as JsonObject;
    assert.deepEqual(toPlain(stateAsInFolder(output, plain, stored)), {
      '#token': '[hidden]',
      '#new': '[hidden]',
      plain: 'plain-secret',
      n: 1,
    });
  });

  it('changes nothing when the folder holds the plaintext itself (a data folder)', () => {
    const output = fromPlain({ '#token': 'plain-secret', time: { previousStart: 2 } }) as JsonObject;
    assert.deepEqual(toPlain(stateAsInFolder(output, plain, plain)), {
      '#token': 'plain-secret',
      time: { previousStart: 2 },
    });
  });
});
