import assert from 'node:assert/strict';
import nock from 'nock';
import { fromPlain } from '../../../src/json/index.js';
import { HttpConfigStore } from '../../../src/store/remote/http-config-store.js';
import { StateSaveFailed } from '../../../src/store/state-save-failed.js';
import { StoreError } from '../../../src/store/store-error.js';

const URL = 'http://storage.test';
const BASE = '/v2/storage/branch/default/components/c/configs/1';
const TOKEN = { id: 7, description: 't' };
const row = (id: string, state: unknown) => ({
  id,
  name: '',
  description: '',
  isDisabled: false,
  configuration: {},
  state,
  version: 1,
  created: 'c',
  creatorToken: TOKEN,
  changeDescription: '',
  versionIdentifier: 'v',
});
const CONFIG = {
  id: '1',
  name: 'n',
  description: '',
  created: 'c',
  creatorToken: TOKEN,
  version: 3,
  changeDescription: '',
  isDisabled: false,
  isDeleted: false,
  configuration: {},
  rowsSortOrder: [],
  state: { root: 0 },
  rows: [
    row('a', { before: 'a' }),
    row('b', { before: 'b', '#k': 'KBC::ProjectSecure::xyz' }),
    row('c', { before: 'c' }),
  ],
  currentVersion: { created: 'c', creatorToken: TOKEN, changeDescription: '', versionIdentifier: 'v' },
};

/**
 * A remote Storage API saves one state per call. Each test scripts the server's answers with nock
 * and checks what was sent: the saves in order, then the restores of what was saved, newest first.
 */
describe('HTTP config store: saving several states (nock)', () => {
  const client = () => new HttpConfigStore({ url: URL, token: 't', retryBaseMs: 1, maxRetries: 0 });
  let sent: Array<{ path: string; body: string }>;
  afterEach(() => nock.cleanAll());

  /** Answers the configuration, then each state PUT with the next status (200 echoes the row back). */
  function scriptedServer(statuses: number[]): nock.Scope {
    sent = [];
    const scope = nock(URL).get(BASE).reply(200, JSON.stringify(CONFIG));
    for (const status of statuses) {
      scope.put(/\/state$/).reply((uri, body) => {
        sent.push({ path: uri.slice(BASE.length), body: JSON.stringify(body) });
        return status === 200
          ? [200, JSON.stringify(uri.includes('/rows/') ? row('x', {}) : CONFIG)]
          : [status, { error: `refused ${status}`, code: 'x' }];
      });
    }
    return scope;
  }

  it('saves one by one in the given order', async () => {
    const scope = scriptedServer([200, 200]);
    await client().saveStates('c', '1', [
      { rowId: 'a', state: fromPlain({ n: 1 }) },
      { rowId: null, state: fromPlain({ n: 0 }) },
    ]);
    assert.deepEqual(sent, [
      { path: '/rows/a/state', body: '{"state":{"n":1}}' },
      { path: '/state', body: '{"state":{"n":0}}' },
    ]);
    assert.ok(scope.isDone());
  });

  it('the third save is refused: the two saved before it are put back to their previous states, newest first', async () => {
    scriptedServer([200, 200, 400, 200, 200]);
    await assert.rejects(
      client().saveStates(
        'c',
        '1',
        ['a', 'b', 'c'].map((id) => ({ rowId: id, state: fromPlain({ after: id }) })),
      ),
      (e: unknown) => {
        assert.ok(e instanceof StateSaveFailed);
        assert.equal(e.failed, 'c');
        assert.ok(e.failure instanceof StoreError && e.failure.status === 400);
        assert.deepEqual(e.restored, ['b', 'a']);
        assert.deepEqual(e.notRestored, []);
        assert.match(
          e.message,
          /Saving the state of row c failed: refused 400; the states saved before it were put back \(row b, row a\)/,
        );
        return true;
      },
    );
    assert.deepEqual(
      sent.map((s) => s.path),
      ['/rows/a/state', '/rows/b/state', '/rows/c/state', '/rows/b/state', '/rows/a/state'],
    );
    // the previous states exactly as the store held them, ciphers included
    assert.equal(sent[3].body, '{"state":{"before":"b","#k":"KBC::ProjectSecure::xyz"}}');
    assert.equal(sent[4].body, '{"state":{"before":"a"}}');
  });

  it('a restore that fails is reported with its reason; the others are still put back', async () => {
    scriptedServer([200, 200, 400, 403, 200]);
    await assert.rejects(
      client().saveStates(
        'c',
        '1',
        ['a', 'b', 'c'].map((id) => ({ rowId: id, state: fromPlain({ after: id }) })),
      ),
      (e: unknown) => {
        assert.ok(e instanceof StateSaveFailed);
        assert.deepEqual(e.restored, ['a']);
        assert.deepEqual(e.notRestored, [{ owner: 'b', reason: 'refused 403' }]);
        assert.match(e.message, /could not be put back and may hold the new state: row b \(refused 403\)/);
        return true;
      },
    );
  });

  it('a save that failed with a server error (after the retries) may have been applied, so it is put back too', async () => {
    scriptedServer([200, 503, 200, 200]);
    await assert.rejects(
      client().saveStates(
        'c',
        '1',
        ['a', 'b'].map((id) => ({ rowId: id, state: fromPlain({ after: id }) })),
      ),
      (e: unknown) => {
        assert.ok(e instanceof StateSaveFailed);
        assert.equal(e.failed, 'b');
        assert.deepEqual(e.restored, ['b', 'a']);
        assert.deepEqual(
          sent.map((x) => x.path),
          ['/rows/a/state', '/rows/b/state', '/rows/b/state', '/rows/a/state'],
        );
        return true;
      },
    );
  });

  it("the first save refused: nothing was saved, the store's own error comes back", async () => {
    scriptedServer([400]);
    await assert.rejects(
      client().saveStates('c', '1', [
        { rowId: 'a', state: fromPlain({}) },
        { rowId: 'b', state: fromPlain({}) },
      ]),
      (e: unknown) => e instanceof StoreError && e.status === 400,
    );
    assert.equal(sent.length, 1);
  });

  it('an unknown row is refused before anything is saved', async () => {
    scriptedServer([]);
    await assert.rejects(
      client().saveStates('c', '1', [
        { rowId: 'a', state: fromPlain({}) },
        { rowId: 'zz', state: fromPlain({}) },
      ]),
      (e: unknown) => e instanceof StoreError && e.status === 404,
    );
    assert.equal(sent.length, 0);
  });

  it('never sends a request for an id that is a path step: a row ".." would address its configuration', async () => {
    // nothing is scripted: any request would fail with nock's "no match" instead of the refusal
    nock.disableNetConnect();
    try {
      for (const id of ['..', '.', '']) {
        await assert.rejects(
          client().updateRowState('c', '1', id, fromPlain({})),
          (e: unknown) => e instanceof StoreError && e.code === 'storage.invalidId',
        );
        await assert.rejects(
          client().getConfiguration('c', id),
          (e: unknown) => e instanceof StoreError && e.code === 'storage.invalidId',
        );
      }
    } finally {
      nock.enableNetConnect();
    }
  });
});
