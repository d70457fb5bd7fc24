import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, startServe } from '../support/cli.js';
import { call, type Json } from '../support/queue.js';

const KEY = { GEX_MASTER_KEY: '69'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';

/** Keboola's Scheduler API on a real gex serve: shapes, refusals naming the field, tokens and projects. */
describe('Scheduler API (gex serve)', function () {
  this.timeout(60_000);
  let dir: string;
  let served: { child: ChildProcess; url: string };
  let token: string;
  let reader: string;
  let stranger: string;
  let target: string;
  let strangerTarget: string;

  const schedulerConfig = async (as: string, configuration: unknown): Promise<string> => {
    const made = await call(served.url, as, 'POST', SCHEDULER_CONFIGS, { name: 's', configuration });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return String(made.body.id);
  };
  const every = (configurationId: string, more: Json = {}) => ({
    schedule: { cronTab: '0 6 * * *', timezone: 'Europe/Prague', state: 'enabled', ...more.schedule },
    target: { componentId: 'ex-generic-v2', configurationId, mode: 'run', ...more.target },
  });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-scheduler-api-'));
    const store = path.join(dir, 'store.sqlite');
    const made = async (args: string[]) => {
      const r = await runGex(['tokens', 'create', ...args, '--store', store], KEY);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    token = await made(['--description', 'ci']);
    reader = await made(['--description', 'viewer', '--read-only']);
    stranger = await made(['--description', 'other', '--project', 'other']);
    served = await startServe(['--store', store, '--workers', '0'], KEY);
    const configuration = { parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } };
    target = String((await call(served.url, token, 'POST', CONFIGS, { name: 'shop', configuration })).body.id);
    strangerTarget = String((await call(served.url, stranger, 'POST', CONFIGS, { name: 'x', configuration })).body.id);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('is listed in the API index as the service "scheduler" at the server\'s origin', async () => {
    const index = (await call(served.url, token, 'GET', '/v2/storage')).body;
    const services = index.services as Json[];
    assert.deepEqual(
      services.map((s) => s.id),
      ['queue', 'scheduler', 'notification'],
    );
    assert.equal(services[1].url, served.url);
  });

  it("activates, lists, reads and deletes schedules in Keboola's shape", async () => {
    const config = await schedulerConfig(token, every(target));
    const activated = await call(served.url, token, 'POST', '/schedules', { configurationId: config });
    assert.equal(activated.status, 201, JSON.stringify(activated.body));
    const s = activated.body;
    assert.deepEqual(Object.keys(s), [
      'id',
      'configurationId',
      'configurationVersionId',
      'tokenId',
      'schedule',
      'target',
      'executions',
    ]);
    assert.equal(typeof s.id, 'string');
    assert.equal(s.configurationId, config);
    assert.equal(s.configurationVersionId, '1');
    assert.equal(typeof s.tokenId, 'string');
    assert.deepEqual(s.schedule, { cronTab: '0 6 * * *', timezone: 'Europe/Prague', state: 'enabled' });
    assert.deepEqual(s.target, {
      componentId: 'ex-generic-v2',
      configurationId: target,
      configurationRowIds: [],
      mode: 'run',
    });
    assert.deepEqual(s.executions, []);
    const listed = await call(served.url, token, 'GET', '/schedules');
    assert.ok((listed.body as unknown as Json[]).some((x) => x.id === s.id));
    assert.deepEqual((await call(served.url, token, 'GET', `/schedules/${s.id}`)).body, s);
    // an earlier version can be activated by number
    const v1 = await call(served.url, token, 'POST', '/schedules', {
      configurationId: config,
      configurationVersionId: '1',
    });
    assert.equal(v1.status, 201);
    assert.equal(v1.body.id, s.id);
    assert.equal((await call(served.url, token, 'DELETE', `/schedules/${s.id}`)).status, 204);
    assert.equal((await call(served.url, token, 'GET', `/schedules/${s.id}`)).status, 404);
    // all of a configuration's schedules at once
    const again = await call(served.url, token, 'POST', '/schedules', { configurationId: config });
    assert.equal((await call(served.url, token, 'DELETE', `/configurations/${config}`)).status, 204);
    assert.equal((await call(served.url, token, 'GET', `/schedules/${again.body.id}`)).status, 404);
  });

  it('refuses bad schedules with a message naming the field; nothing is activated', async () => {
    const cases: Array<[Json, string, number]> = [
      [every(target, { schedule: { cronTab: '61 * * * *' } }), 'schedule.cronTab', 400],
      [every(target, { schedule: { cronTab: 'every hour' } }), 'schedule.cronTab', 400],
      [every(target, { schedule: { timezone: 'Europe/Atlantis' } }), 'schedule.timezone', 400],
      [every(target, { schedule: { state: 'sometimes' } }), 'schedule.state', 400],
      [every(target, { target: { mode: 'debug' } }), 'target.mode', 400],
      [every('no-such-config'), 'target.configurationId', 404],
      [every(strangerTarget), 'target.configurationId', 404],
      [every(target, { target: { configurationRowIds: ['ghost'] } }), 'target.configurationRowIds', 400],
      [every(target, { target: { componentId: 'keboola.scheduler' } }), 'target.componentId', 400],
      [{ schedule: 'hourly' }, 'schedule', 400],
    ];
    const before = ((await call(served.url, token, 'GET', '/schedules')).body as unknown as Json[]).length;
    for (const [configuration, field, status] of cases) {
      const config = await schedulerConfig(token, configuration);
      const refused = await call(served.url, token, 'POST', '/schedules', { configurationId: config });
      assert.equal(refused.status, status, `${field}: ${JSON.stringify(refused.body)}`);
      assert.match(String(refused.body.error), new RegExp(`Invalid schedule: ${field.replace('.', '\\.')}:`));
    }
    const missing = await call(served.url, token, 'POST', '/schedules', { configurationId: 'nope' });
    assert.equal(missing.status, 404);
    assert.match(String(missing.body.error), /Configuration nope of keboola.scheduler not found/);
    const noId = await call(served.url, token, 'POST', '/schedules', {});
    assert.equal(noId.status, 400);
    assert.match(String(noId.body.error), /configurationId/);
    assert.equal(((await call(served.url, token, 'GET', '/schedules')).body as unknown as Json[]).length, before);
  });

  it('gex schedules works against the server as on the embedded store (through its Storage and Scheduler APIs)', async () => {
    const gex = (...args: string[]) => runGex(['schedules', ...args, '--store', served.url, '--token', token]);
    const added = await gex('add', target, '--cron', '*/30 * * * *', '--timezone', 'Europe/Prague', '--json');
    assert.equal(added.code, 0, added.stderr);
    const schedule = JSON.parse(added.stdout);
    assert.equal(schedule.state, 'enabled');
    assert.equal(schedule.target.configurationId, target);
    assert.ok(schedule.nextRun);
    const viaApi = (await call(served.url, token, 'GET', `/schedules/${schedule.id}`)).body;
    assert.deepEqual(viaApi.schedule, { cronTab: '*/30 * * * *', timezone: 'Europe/Prague', state: 'enabled' });

    assert.match((await gex('disable', String(schedule.id))).stdout, new RegExp(`Schedule ${schedule.id} disabled`));
    assert.equal((await call(served.url, token, 'GET', `/schedules/${schedule.id}`)).body.schedule.state, 'disabled');
    const listed = await gex('list');
    assert.match(
      listed.stdout,
      new RegExp(`^${schedule.id} {2}"\\*/30 \\* \\* \\* \\*" Europe/Prague {2}disabled {2}ex-generic-v2 `, 'm'),
    );
    assert.equal((await gex('enable', String(schedule.id))).code, 0);

    // a target the server refuses: nothing is left behind
    const configsBefore = (await call(served.url, token, 'GET', SCHEDULER_CONFIGS)).body as unknown as Json[];
    const refused = await gex('add', 'no-such-config', '--cron', '* * * * *');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /target\.configurationId: configuration no-such-config of ex-generic-v2 not found/);
    assert.equal(
      ((await call(served.url, token, 'GET', SCHEDULER_CONFIGS)).body as unknown as Json[]).length,
      configsBefore.length,
    );
    // checked before anything is sent
    const badCron = await gex('add', target, '--cron', '99 * * * *');
    assert.equal(badCron.code, 1);
    assert.match(badCron.stderr, /schedule\.cronTab/);

    assert.match((await gex('remove', String(schedule.id))).stdout, /removed/);
    assert.equal((await call(served.url, token, 'GET', `/schedules/${schedule.id}`)).status, 404);
    const other = await runGex(['schedules', 'list', '--store', served.url, '--token', stranger]);
    assert.match(other.stdout, /No schedules/);
  });

  it("keeps projects apart and read-only tokens out; another project's schedule is not found", async () => {
    const config = await schedulerConfig(token, every(target));
    const mine = (await call(served.url, token, 'POST', '/schedules', { configurationId: config })).body;
    assert.equal((await call(served.url, stranger, 'GET', `/schedules/${mine.id}`)).status, 404);
    assert.equal((await call(served.url, stranger, 'DELETE', `/schedules/${mine.id}`)).status, 404);
    assert.deepEqual((await call(served.url, stranger, 'GET', '/schedules')).body, []);
    // the stranger cannot activate this project's scheduler configuration either
    assert.equal((await call(served.url, stranger, 'POST', '/schedules', { configurationId: config })).status, 404);
    assert.equal((await call(served.url, reader, 'POST', '/schedules', { configurationId: config })).status, 403);
    assert.equal((await call(served.url, reader, 'DELETE', `/schedules/${mine.id}`)).status, 403);
    assert.equal((await call(served.url, reader, 'GET', `/schedules/${mine.id}`)).status, 200);
    assert.equal((await call(served.url, 'not-a-token', 'GET', '/schedules')).status, 401);
    assert.equal((await call(served.url, token, 'GET', '/schedules/1%2F..%2F2')).status, 404);
  });

  it("answers in the Scheduler API's error shape (the status as a number), a missing or unknown token as 401 Invalid access token", async () => {
    const schedulerError = (
      res: { status: number; body: Json },
      status: number,
      message: RegExp,
      errorCode?: string,
    ) => {
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['error', 'code', 'exceptionId', 'status', 'context', 'gexCode']);
      assert.equal(res.body.code, status);
      assert.match(res.body.error, message);
      if (errorCode) assert.equal(res.body.context.errorCode, errorCode);
    };
    for (const [method, url] of [
      ['GET', '/schedules'],
      ['POST', '/schedules'],
      ['GET', '/schedules/1'],
      ['DELETE', '/configurations/1'],
    ]) {
      const missing = await fetch(`${served.url}${url}`, { method });
      schedulerError({ status: missing.status, body: (await missing.json()) as Json }, 401, /^Invalid access token$/);
      schedulerError(await call(served.url, 'not-a-token', method, url), 401, /^Invalid access token$/);
    }
    schedulerError(await call(served.url, token, 'GET', '/schedules/999999'), 404, /not found/, 'scheduler.notFound');
    const refused = await call(served.url, token, 'POST', '/schedules', { configurationId: '' });
    schedulerError(refused, 400, /configurationId/, 'scheduler.validation');
    assert.equal(refused.body.context.errors[0].key, 'configurationId');
  });
});
