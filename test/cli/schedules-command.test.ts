import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openEmbeddedStore } from '../support/open-store.js';

const KEY = { GEX_MASTER_KEY: '6a'.repeat(32) };

describe('gex schedules (embedded store)', function () {
  this.timeout(60_000);
  let dir: string;
  let store: string;
  const gex = (...args: string[]) => runGexInProcess([...args, '--store', store], KEY);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-schedules-cli-'));
    store = path.join(dir, 'store.sqlite');
    const created = await gex(
      'configs',
      'create',
      '--name',
      'Shop',
      '--config-id',
      'shop',
      '--set',
      'parameters.api.baseUrl=http://127.0.0.1:9/',
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await gex('rows', 'add', 'shop', '--row-id', 'users')).code, 0);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('adds, lists, disables, enables and removes a schedule', async () => {
    const added = await gex(
      'schedules',
      'add',
      'shop',
      '--cron',
      '30 6 * * 1-5',
      '--timezone',
      'Europe/Prague',
      '--row-id',
      'users',
    );
    assert.equal(added.code, 0, added.stderr);
    const id = /Schedule (\d+) added: "30 6 \* \* 1-5" \(Europe\/Prague\) runs ex-generic-v2 shop; next run (\S+)/.exec(
      added.stdout,
    );
    assert.ok(id, added.stdout);
    const next = new Date(id[2]);
    // 06:30 in Prague is 04:30 or 05:30 UTC, on a weekday
    assert.ok([4, 5].includes(next.getUTCHours()) && next.getUTCMinutes() === 30, id[2]);
    assert.ok(next.getUTCDay() >= 1 && next.getUTCDay() <= 5);

    const listed = JSON.parse((await gex('schedules', 'list', '--json')).stdout);
    assert.equal(listed.length, 1);
    assert.equal(listed[0].state, 'enabled');
    assert.deepEqual(listed[0].target.configurationRowIds, ['users']);
    assert.equal(listed[0].nextRun, id[2]);
    assert.equal(listed[0].lastJob, null);

    assert.match((await gex('schedules', 'disable', id[1])).stdout, new RegExp(`Schedule ${id[1]} disabled`));
    const off = JSON.parse((await gex('schedules', 'list', '--json')).stdout)[0];
    assert.equal(off.state, 'disabled');
    assert.equal(off.nextRun, null);
    assert.equal(off.id, Number(id[1]), 'the same schedule');
    // the schedule is a versioned keboola.scheduler configuration
    const versions = await gex('configs', 'versions', off.configurationId, '--component-id', 'keboola.scheduler');
    assert.equal(versions.code, 0, versions.stderr);
    assert.match(versions.stdout, /Schedule disabled/);

    assert.equal((await gex('schedules', 'enable', id[1])).code, 0);
    assert.match((await gex('schedules', 'list')).stdout, /enabled {2}ex-generic-v2 shop {2}next \S+ {2}last none/);
    assert.match((await gex('schedules', 'remove', id[1])).stdout, /removed/);
    assert.match((await gex('schedules', 'list')).stdout, /No schedules/);
  });

  it('lists a schedule an older gex stored with a cron that never fires: no next run, and why', async () => {
    const added = await gex('schedules', 'add', 'shop', '--cron', '0 0 30 4 *');
    assert.equal(added.code, 0, added.stderr);
    const backend = await openEmbeddedStore(store, KEY);
    try {
      const row = await backend.db.get<{ id: number; definition: string }>('SELECT id, definition FROM schedules');
      await backend.db.run('UPDATE schedules SET definition = ? WHERE id = ?', [
        JSON.stringify({ ...JSON.parse(row!.definition), cronTab: '0 0 31 4,6,9,11 *' }),
        row!.id,
      ]);
    } finally {
      await backend.close();
    }
    const listed = await gex('schedules', 'list');
    assert.match(
      listed.stdout,
      /"0 0 31 4,6,9,11 \*" UTC {2}enabled {2}ex-generic-v2 shop {2}next - {2}last none {2}\(never fires: day of month 31 does not occur in month 4,6,9,11 \(at most 30 days\): fix its cron\)/,
    );
    assert.equal(JSON.parse((await gex('schedules', 'list', '--json')).stdout)[0].nextRun, null);
    const id = String(JSON.parse((await gex('schedules', 'list', '--json')).stdout)[0].id);
    assert.match((await gex('schedules', 'remove', id)).stdout, /removed/);
  });

  it('refuses a bad cron, an unknown time zone, a missing configuration or row, naming the field; stores nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['shop', '--cron', '61 * * * *'], /schedule\.cronTab: "61 \* \* \* \*": .*61/],
      [['shop', '--cron', '* * * * *', '--timezone', 'Mars/Base'], /schedule\.timezone: .*unknown time zone/],
      // a cron whose day never comes, and one whose days are decades apart
      [
        ['shop', '--cron', '0 0 31 4,6,9,11 *'],
        /schedule\.cronTab: "0 0 31 4,6,9,11 \*": never fires: day of month 31 does not occur in month 4,6,9,11 \(at most 30 days\)/,
      ],
      [['shop', '--cron', '0 0 * 2 1#5'], /schedule\.cronTab: "0 0 \* 2 1#5": fires too rarely: .* years apart/],
      [['nope', '--cron', '* * * * *'], /target\.configurationId: configuration nope of ex-generic-v2 not found/],
      [
        ['shop', '--cron', '* * * * *', '--row-id', 'ghost'],
        /target\.configurationRowIds: configuration shop has no row ghost/,
      ],
    ];
    for (const [args, message] of cases) {
      const refused = await gex('schedules', 'add', ...args);
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, message);
    }
    assert.match((await gex('schedules', 'list')).stdout, /No schedules/);
    const configs = await gex('configs', 'list', '--component-id', 'keboola.scheduler', '--json');
    assert.deepEqual(
      JSON.parse(configs.stdout).filter((c: { isDeleted?: boolean }) => !c.isDeleted),
      [],
    );
    const badId = await gex('schedules', 'disable', '../1');
    assert.equal(badId.code, 1);
    assert.match(badId.stderr, /A schedule id is a number/);
  });
});
