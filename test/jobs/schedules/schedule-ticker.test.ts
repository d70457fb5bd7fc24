import assert from 'node:assert/strict';
import { GENERIC_EXTRACTOR_ID } from '../../../src/cli/builtin-components.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import { activateSchedule } from '../../../src/jobs/schedules/schedule-activation.js';
import { SCHEDULER_COMPONENT_ID } from '../../../src/jobs/schedules/scheduler-component.js';
import { EXECUTIONS_KEPT, ScheduleRepository } from '../../../src/jobs/schedules/schedule-repository.js';
import { ScheduleTicker } from '../../../src/jobs/schedules/schedule-ticker.js';
import { fromPlain } from '../../../src/json/index.js';
import type { TokenInfo } from '../../../src/store/types.js';
import { captureLogger } from '../../support/extraction.js';
import { storeBackends } from '../../support/store.js';

describe('schedules fired by tickers', function () {
  this.timeout(30_000);

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let token: TokenInfo;
      let clock: Date;

      const ticker = (logger = captureLogger('info')) => ({
        logger,
        ticker: new ScheduleTicker({
          schedules: new ScheduleRepository(opened.backend.db),
          jobs: new JobRepository(opened.backend.db),
          token: (id) => opened.backend.tokenById(id),
          storeOf: (t) => opened.backend.session(t),
          logger: logger.logger,
          now: () => clock,
        }),
      });

      async function schedule(cronTab: string, more: Record<string, unknown> = {}, timezone = 'UTC') {
        const store = opened.backend.session(token);
        const config = await store.createConfiguration(SCHEDULER_COMPONENT_ID, {
          name: 'every few seconds',
          configuration: fromPlain({
            schedule: { cronTab, timezone, state: 'enabled' },
            target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop', ...more },
          }),
        });
        return activateSchedule(store, token, new ScheduleRepository(opened.backend.db), config.id);
      }

      const jobsOf = async () =>
        (
          await new JobRepository(opened.backend.db).search(token.projectId, {
            limit: 100,
            offset: 0,
            sortBy: 'id',
            sortOrder: 'asc',
          })
        ).map((j) => ({ id: j.id, config: j.configId, rows: j.configRowIds, token: j.tokenId }));

      beforeEach(async () => {
        opened = await factory.open();
        token = (await opened.backend.createToken({ description: 'ci' })).info;
        const store = opened.backend.session(token);
        await store.createConfiguration(GENERIC_EXTRACTOR_ID, {
          name: 'Shop',
          configurationId: 'shop',
          configuration: fromPlain({ parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } }),
        });
        await store.createRow(GENERIC_EXTRACTOR_ID, 'shop', { rowId: 'users', configuration: fromPlain({}) });
        clock = new Date(Date.now() - 1000);
      });
      afterEach(() => opened.dispose());

      it('fires each tick once, whichever of several tickers sees it first', async () => {
        const s = await schedule('*/2 * * * * *', { configurationRowIds: ['users'] });
        const three = [ticker(), ticker(), ticker()];
        // every ticker checks at each of these instants (2 s ticks, checks at 1 s): 3 ticks fall in them
        for (const iso of [
          '2030-01-01T00:00:00.5Z',
          '2030-01-01T00:00:01.5Z',
          '2030-01-01T00:00:02.2Z',
          '2030-01-01T00:00:04.1Z',
        ]) {
          clock = new Date(iso);
          await Promise.all(three.map((t) => t.ticker.check()));
        }
        const jobs = await jobsOf();
        assert.equal(jobs.length, 3, JSON.stringify(jobs));
        assert.ok(jobs.every((j) => j.config === 'shop' && j.rows.join() === 'users' && j.token === token.id));
        const executions = (await new ScheduleRepository(opened.backend.db).executions([s.id])).get(s.id)!;
        assert.deepEqual(
          executions.map((e) => e.executionTime),
          ['2030-01-01T00:00:04.000Z', '2030-01-01T00:00:02.000Z', '2030-01-01T00:00:00.000Z'],
        );
        assert.deepEqual(executions.map((e) => e.jobId).sort(), jobs.map((j) => j.id).sort());
        const fired = three.map((t) => t.logger.text()).join('');
        assert.equal(fired.match(/fired the tick of/g)?.length, 3);
      });

      it('ticks before the schedule was activated are not fired; a missed tick is logged once and not made up', async () => {
        const s = await schedule('0 * * * *');
        const created = Date.parse(s.created);
        // an hour and a half later: the tick in between fell while no ticker ran
        const hour = Math.ceil(created / 3_600_000) * 3_600_000;
        clock = new Date(hour + 90_000);
        const t = ticker();
        await t.ticker.check();
        await t.ticker.check();
        assert.deepEqual(await jobsOf(), []);
        assert.equal(t.logger.text().match(/ missed \(/g)?.length, 1, t.logger.text());
        assert.match(t.logger.text(), /not made up, next /);
        // the next tick is fired on time
        clock = new Date(hour + 3_600_000 + 200);
        await t.ticker.check();
        assert.equal((await jobsOf()).length, 1);
      });

      it('after a gap, fires the due tick only and logs the ticks between as missed', async () => {
        await schedule('*/2 * * * * *');
        const t = ticker();
        clock = new Date('2030-01-01T00:00:00.300Z');
        await t.ticker.check();
        assert.equal((await jobsOf()).length, 1);
        // nothing ran for 20 s: the tick at 00:20 is due, the nine between were missed
        clock = new Date('2030-01-01T00:00:20.400Z');
        await t.ticker.check();
        assert.equal((await jobsOf()).length, 2, 'one job for the due tick, none for the missed ones');
        assert.match(
          t.logger.text(),
          /9 ticks from 2030-01-01T00:00:02\.000Z to 2030-01-01T00:00:18\.000Z were missed \(no worker ran, or the schedule was disabled\); not made up, next 2030-01-01T00:00:20\.000Z/,
        );
        assert.match(t.logger.text(), /fired the tick of 2030-01-01T00:00:20\.000Z/);
      });

      it('a disabled schedule does not fire; one whose target or token is gone stops and says so', async () => {
        const every = await schedule('* * * * * *');
        clock = new Date(Date.now() + 2000);
        const t = ticker();
        await opened.backend.session(token).deleteConfiguration(GENERIC_EXTRACTOR_ID, 'shop');
        await t.ticker.check();
        assert.deepEqual(await jobsOf(), []);
        const stopped = await new ScheduleRepository(opened.backend.db).get(token.projectId, every.id);
        assert.match(String(stopped?.stopped), /its target can no longer run: .*configuration shop/);
        assert.match(t.logger.text(), /stopped firing: its target can no longer run/);
        await t.ticker.check();
        assert.equal(t.logger.text().match(/stopped firing/g)?.length, 1, 'said once');

        // the token: a schedule activated by a token that is then revoked
        await opened.backend.session(token).restoreConfiguration(GENERIC_EXTRACTOR_ID, 'shop');
        const other = (await opened.backend.createToken({ description: 'temp' })).info;
        const store = opened.backend.session(other);
        const config = await store.createConfiguration(SCHEDULER_COMPONENT_ID, {
          name: 'by a temporary token',
          configuration: fromPlain({
            schedule: { cronTab: '* * * * * *', timezone: 'UTC', state: 'disabled' },
            target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
          }),
        });
        const disabled = await activateSchedule(store, other, new ScheduleRepository(opened.backend.db), config.id);
        clock = new Date(Date.now() + 5000);
        await t.ticker.check();
        assert.deepEqual(await jobsOf(), [], 'disabled: nothing fired');
        await store.updateConfiguration(SCHEDULER_COMPONENT_ID, config.id, {
          configuration: fromPlain({
            schedule: { cronTab: '* * * * * *', timezone: 'UTC', state: 'enabled' },
            target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
          }),
        });
        assert.equal(
          (await activateSchedule(store, other, new ScheduleRepository(opened.backend.db), config.id)).id,
          disabled.id,
        );
        await opened.backend.revokeToken(other.id);
        await t.ticker.check();
        assert.deepEqual(await jobsOf(), []);
        assert.match(
          String((await new ScheduleRepository(opened.backend.db).get(token.projectId, disabled.id))?.stopped),
          /token .* deleted/,
        );
      });

      it('keeps the latest executions only', async () => {
        const s = await schedule('* * * * * *');
        const jobs = new JobRepository(opened.backend.db);
        const job = {
          projectId: token.projectId,
          componentId: GENERIC_EXTRACTOR_ID,
          configId: 'shop',
          branchId: '1',
          mode: 'run' as const,
          parentRunId: '',
          tokenId: token.id,
          tokenDescription: 'ci',
          configRowIds: [],
          tag: null,
          orchestrationJobId: null,
          timeoutSeconds: null,
        };
        for (let i = 0; i < EXECUTIONS_KEPT + 5; i++)
          assert.ok(
            await new ScheduleRepository(opened.backend.db).fire(s, new Date(Date.UTC(2031, 0, 1, 0, 0, i)), job, jobs),
          );
        const latest = new Date(Date.UTC(2031, 0, 1, 0, 0, EXECUTIONS_KEPT + 4));
        assert.equal(
          await new ScheduleRepository(opened.backend.db).fire(s, latest, job, jobs),
          undefined,
          'a fired tick is not fired again',
        );
        const kept = (await new ScheduleRepository(opened.backend.db).executions([s.id])).get(s.id)!;
        assert.equal(kept.length, EXECUTIONS_KEPT);
        assert.equal(kept[0].executionTime, new Date(Date.UTC(2031, 0, 1, 0, 0, EXECUTIONS_KEPT + 4)).toISOString());
      });
    });
  }
});
