import assert from 'node:assert/strict';
import { fromPlain, stringifyExact, type JsonValue } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { importConfiguration } from '../../src/store/import-configuration.js';
import { configurationToWire, rowToWire, versionDetailToWire } from '../../src/store/wire/configurations.js';
import { storedData, type StoredData } from '../support/stored-data.js';
import { storeBackends } from '../support/store.js';

const C = 'ex-generic-v2';
const json = (v: JsonValue): string => stringifyExact(v);

/** An import document of `rows` rows with fixed-width ids (so every row stores the same bytes), in reverse custom order. */
function document(id: string, rows: number): JsonValue {
  const ids = Array.from({ length: rows }, (_, i) => `r${String(i).padStart(5, '0')}`);
  return fromPlain({
    name: id,
    configurationId: id,
    configuration: { parameters: { api: { baseUrl: 'https://api.example.com/' } } },
    rows: ids.map((rowId) => ({
      rowId,
      name: `row ${rowId}`,
      configuration: { parameters: { endpoint: `resource/${rowId}` } },
    })),
    rowsSortOrder: [...ids].reverse(),
  });
}

const minus = (a: StoredData, b: StoredData): StoredData => ({
  records: a.records - b.records,
  bytes: a.bytes - b.bytes,
});

/** A small deterministic PRNG (mulberry32): the same seed, the same history. */
function random(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

for (const factory of storeBackends()) {
  describe(`configuration history (${factory.name})`, () => {
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let location: string;
    let store: ConfigStore;

    beforeEach(async () => {
      ({ backend, dispose, location } = await factory.open());
      store = await backend.localSession();
    });
    afterEach(() => dispose());

    describe('import', () => {
      it("is one configuration version: every row at row version 1 with the import's change description, the order set", async () => {
        const c = await importConfiguration(store, C, document('one', 3));
        assert.equal(c.version, 1);
        assert.equal(c.changeDescription, 'Imported from a file');
        const versions = await store.listConfigurationVersions(C, 'one');
        assert.deepEqual(
          versions.map((v) => [v.version, v.changeDescription]),
          [[1, 'Imported from a file']],
        );
        const v1 = await store.getConfigurationVersion(C, 'one', 1);
        assert.deepEqual(v1.rowsSortOrder, ['r00002', 'r00001', 'r00000']);
        assert.deepEqual(
          v1.rows.map((r) => [r.id, r.version, r.changeDescription]),
          [
            ['r00002', 1, 'Imported from a file'],
            ['r00001', 1, 'Imported from a file'],
            ['r00000', 1, 'Imported from a file'],
          ],
        );
        // what the import returns is what is stored
        assert.equal(json(configurationToWire(c)), json(configurationToWire(await store.getConfiguration(C, 'one'))));
        assert.deepEqual(
          (await store.listRowVersions(C, 'one', 'r00001')).map((v) => v.version),
          [1],
        );
      });

      it("into a trashed configuration's id continues its version counters: one version, reused row ids at their next row version", async () => {
        await store.createConfiguration(C, { name: 'old', configurationId: 'again' });
        await store.createRow(C, 'again', { rowId: 'r00000', name: 'old row' });
        await store.createRow(C, 'again', { rowId: 'gone', name: 'old row' });
        await store.deleteConfiguration(C, 'again');
        const c = await importConfiguration(store, C, document('again', 2));
        assert.equal(c.version, 5, 'create, 2 rows, trash, then the import');
        assert.deepEqual(
          c.rows.map((r) => [r.id, r.version]),
          [
            ['r00001', 1],
            ['r00000', 2],
          ],
        );
        const v5 = await store.getConfigurationVersion(C, 'again', 5);
        assert.deepEqual(
          v5.rows.map((r) => r.id),
          ['r00001', 'r00000'],
          'the old rows are gone',
        );
        assert.deepEqual(
          (await store.getConfigurationVersion(C, 'again', 4)).rows.map((r) => r.id),
          ['gone', 'r00000'],
          'the trashed version still holds them',
        );
      });

      it('draws generated row ids from the row counter as creating rows one by one does, skipping ids given in the document', async () => {
        await store.createConfiguration(C, { name: 'x', configurationId: 'x' });
        await store.createRow(C, 'x', { name: 'first generated' });
        const c = await importConfiguration(
          store,
          C,
          fromPlain({ name: 'ids', configurationId: 'ids', rows: [{ rowId: '3' }, {}, {}, {}] }),
        );
        assert.deepEqual(
          c.rows.map((r) => r.id),
          ['2', '3', '4', '5'],
          'counter at 1 before: 2, then 3 is taken, so 4 and 5',
        );
        const next = await store.createRow(C, 'x', {});
        assert.equal(next.id, '6', 'the counter went on from there');
      });
    });

    it('keeps history in space linear in rows: 10,000 rows take 10× of 1,000, and one row change costs the same in both', async function () {
      this.timeout(60_000);
      const empty = await storedData(location);
      await importConfiguration(store, C, document('small', 1000));
      const withSmall = await storedData(location);
      await importConfiguration(store, C, document('large', 10_000));
      const small = minus(withSmall, empty);
      const large = minus(await storedData(location), withSmall);
      // before, the import of n rows stored n versions holding n²/2 row references: 1,000 rows 13 MB, 10,000 rows over 1 GB
      assert.ok(
        large.records <= 10 * small.records + 10,
        `records: ${large.records} for 10,000 rows vs ${small.records} for 1,000`,
      );
      assert.ok(large.bytes <= 10.2 * small.bytes, `bytes: ${large.bytes} for 10,000 rows vs ${small.bytes} for 1,000`);
      assert.ok(small.bytes < 1000 * 1000, `about a row's content per row: ${small.bytes} bytes for 1,000 rows`);

      // one change of each kind adds the same to a configuration of 1,000 rows as to one of 10,000: a row's worth
      const changes = async (id: string) => {
        await store.updateRow(C, id, 'r00500', { configuration: fromPlain({ parameters: { endpoint: 'changed' } }) });
        await store.createRow(C, id, {
          rowId: 'added',
          configuration: fromPlain({ parameters: { endpoint: 'added' } }),
        });
        await store.deleteRow(C, id, 'r00700');
        await store.rollbackRow(C, id, 'r00500', 1);
        await store.updateConfiguration(C, id, { name: `${id} renamed` });
      };
      const before = await storedData(location);
      await changes('small');
      const afterSmall = await storedData(location);
      await changes('large');
      const onSmall = minus(afterSmall, before).bytes;
      const onLarge = minus(await storedData(location), afterSmall).bytes;
      assert.ok(
        Math.abs(onSmall - onLarge) <= 40,
        `5 changes: ${onSmall} bytes on 1,000 rows, ${onLarge} bytes on 10,000`,
      );
      assert.ok(onLarge < 5 * 1000, `5 changes: ${onLarge} bytes`);
    });

    it('reads every version back as it was made, through random changes of rows, order, rollbacks, copies and trash', async function () {
      this.timeout(60_000);
      const seed = Number(process.env.GEX_HISTORY_SEED ?? 23);
      const pick = random(seed);
      const id = 'history';
      await store.createConfiguration(C, { name: 'history', configurationId: id });
      // version 1 is the create; each later one is read right after the step that made it
      const made = new Map<number, string>();
      // a version's row shows its row's creation time, which a re-created row (an id used again) changes, as before
      const detail = async (configId: string, v: number) => {
        const version = await store.getConfigurationVersion(C, configId, v);
        return json(versionDetailToWire({ ...version, rows: version.rows.map((r) => ({ ...r, created: '' })) }));
      };
      made.set(1, await detail(id, 1));
      let rowCounter = 0;
      const kinds = new Set<number>();
      let trashed = false;
      const live = async () => (await store.getConfiguration(C, id)).rows;
      const one = <T>(list: T[]): T => list[pick(list.length)];

      for (let step = 0; step < 80; step++) {
        const context = `seed ${seed}, step ${step}`;
        if (trashed) {
          await store.restoreConfiguration(C, id);
          trashed = false;
        } else {
          const rows = await live();
          const current = (await store.getConfiguration(C, id)).version;
          const choice = rows.length < 3 ? 0 : pick(11);
          kinds.add(choice);
          if (choice <= 2) {
            // a new id, or the id of a deleted row again (its version counter continues)
            await store
              .createRow(C, id, {
                rowId: pick(4) === 0 ? `r${pick(rowCounter + 1)}` : `r${++rowCounter}`,
                name: `n${step}`,
                configuration: fromPlain({ step }),
              })
              .catch((e: Error) => {
                if (!/already exists/.test(e.message)) throw e;
              });
          } else if (choice === 3)
            await store.updateRow(
              C,
              id,
              one(rows).id,
              pick(2) ? { name: `renamed ${step}` } : { configuration: fromPlain({ changed: step }) },
            );
          else if (choice === 4) await store.deleteRow(C, id, one(rows).id);
          else if (choice === 5) {
            const order = rows.map((r) => r.id).sort(() => pick(3) - 1);
            await store.updateConfiguration(C, id, { rowsSortOrder: pick(4) === 0 ? [] : order });
          } else if (choice === 6) {
            const row = one(rows);
            await store.rollbackRow(C, id, row.id, 1 + pick(row.version));
          } else if (choice === 7) await store.rollbackConfiguration(C, id, 1 + pick(current));
          else if (choice === 8) await store.copyRow(C, id, one(rows).id, 1);
          else if (choice === 9) {
            await store.deleteConfiguration(C, id);
            trashed = true;
          } else {
            // a copy of an earlier version holds that version's rows (same ids, row version 1) in its order
            const v = 1 + pick(current);
            const copy = await store.copyConfiguration(C, id, v, { name: `copy ${step}` });
            const source = await store.getConfigurationVersion(C, id, v);
            const copied = await store.getConfigurationVersion(C, copy.id, 1);
            assert.deepEqual(copied.rowsSortOrder, source.rowsSortOrder, context);
            assert.deepEqual(
              copied.rows.map((r) => [r.id, r.name, json(r.configuration), r.version]),
              source.rows.map((r) => [r.id, r.name, json(r.configuration), 1]),
              context,
            );
          }
        }
        if (!trashed) {
          // every version this step made (a trashed configuration's versions are read once it is back)
          const newest = (await store.listConfigurationVersions(C, id, { limit: 1 }))[0].version;
          for (let v = made.size + 1; v <= newest; v++) made.set(v, await detail(id, v));
          // the newest version holds exactly the live rows (without state) in the live order
          const c = await store.getConfiguration(C, id);
          const version = await store.getConfigurationVersion(C, id, newest);
          assert.deepEqual(version.rowsSortOrder, c.rowsSortOrder, context);
          assert.deepEqual(
            version.rows.map((r) => json(rowToWire(r, { configuration: true }))),
            c.rows.map((r) => json(rowToWire(r, { configuration: true }))),
            context,
          );
        }
      }
      if (trashed) await store.restoreConfiguration(C, id);
      assert.equal(kinds.size, 11, `every kind of change ran (seed ${seed})`);
      assert.ok(made.size >= 60, `${made.size} versions made`);
      for (const [v, text] of made)
        assert.equal(await detail(id, v), text, `version ${v} (seed ${seed}) reads back as it was made`);
    });
  });
}
