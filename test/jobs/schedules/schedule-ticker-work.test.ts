import assert from 'node:assert/strict';
import { GENERIC_EXTRACTOR_ID } from '../../../src/cli/builtin-components.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import { cronTicks, type CronTicks } from '../../../src/jobs/schedules/cron-tick.js';
import { activateSchedule } from '../../../src/jobs/schedules/schedule-activation.js';
import type { ScheduleDefinition } from '../../../src/jobs/schedules/schedule-definition.js';
import { ScheduleRepository, type ScheduleRecord } from '../../../src/jobs/schedules/schedule-repository.js';
import { ScheduleTicker } from '../../../src/jobs/schedules/schedule-ticker.js';
import { SCHEDULER_COMPONENT_ID } from '../../../src/jobs/schedules/scheduler-component.js';
import { fromPlain } from '../../../src/json/index.js';
import type { Database, SqlExecutor } from '../../../src/store/sql/database.js';
import { StoreError } from '../../../src/store/store-error.js';
import type { TokenInfo } from '../../../src/store/types.js';
import { captureLogger } from '../../support/extraction.js';
import { storeBackends } from '../../support/store.js';

/** `db` with every statement and every row it read counted (those of transactions too). */
function counting(db: Database): { db: Database; statements: () => number; rows: () => number } {
  let statements = 0;
  let rows = 0;
  const executor = <T extends SqlExecutor>(target: T): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value: unknown = Reflect.get(object, key, receiver);
        if (typeof value !== 'function') return value;
        if (key === 'all' || key === 'get' || key === 'run')
          return async (...args: unknown[]) => {
            statements++;
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
            if (key === 'all') rows += (result as unknown[]).length;
            if (key === 'get' && result !== undefined) rows++;
            return result;
          };
        if (key === 'transaction')
          return (work: (tx: SqlExecutor) => Promise<unknown>, options?: unknown) =>
            (value as Database['transaction']).call(object, (tx) => work(executor(tx)), options as never);
        return (value as (...a: unknown[]) => unknown).bind(object);
      },
    });
  return { db: executor(db), statements: () => statements, rows: () => rows };
}

/** cronTicks with every question asked counted (an answer it remembered included). */
function countingCron(): { cron: (expression: string, zone: string) => CronTicks; evaluations: () => number } {
  let evaluations = 0;
  return {
    cron(expression, zone) {
      const ticks = cronTicks(expression, zone);
      return {
        never: ticks.never,
        nextAfter: (after) => (evaluations++, ticks.nextAfter(after)),
        latestAtOrBefore: (now) => (evaluations++, ticks.latestAtOrBefore(now)),
      };
    },
    evaluations: () => evaluations,
  };
}

describe('what a schedule ticker reads and evaluates (injected clock, counted work)', function () {
  this.timeout(120_000);

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let token: TokenInfo;
      let clock: Date;

      const definition = (cronTab: string, more: Partial<ScheduleDefinition> = {}): ScheduleDefinition => ({
        cronTab,
        timezone: 'Europe/Prague',
        state: 'enabled',
        target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop', configurationRowIds: [], mode: 'run' },
        ...more,
      });

      /** A schedule stored as activation stores it (its configuration id need not exist for the ticker). */
      const activate = (configurationId: string, def: ScheduleDefinition, at = clock): Promise<ScheduleRecord> =>
        new ScheduleRepository(opened.backend.db).activate(
          {
            projectId: token.projectId,
            configurationId,
            configurationVersionId: 1,
            tokenId: token.id,
            definition: def,
          },
          at,
        );

      function ticker(options: { db?: Database; cron?: (e: string, z: string) => CronTicks; sliceMs?: number } = {}) {
        const logger = captureLogger('info');
        const t = new ScheduleTicker({
          schedules: new ScheduleRepository(options.db ?? opened.backend.db),
          jobs: new JobRepository(opened.backend.db),
          token: (id) => opened.backend.tokenById(id),
          storeOf: (t) => opened.backend.session(t),
          logger: logger.logger,
          now: () => clock,
          cron: options.cron,
          sliceMs: options.sliceMs,
        });
        return { ticker: t, log: logger.text };
      }

      const executions = async (id: number) =>
        ((await new ScheduleRepository(opened.backend.db).executions([id])).get(id) ?? [])
          .map((e) => e.executionTime)
          .reverse();
      const later = (ms: number) => (clock = new Date(clock.getTime() + ms));

      beforeEach(async () => {
        opened = await factory.open();
        token = (await opened.backend.createToken({ description: 'ci' })).info;
        await opened.backend.session(token).createConfiguration(GENERIC_EXTRACTOR_ID, {
          name: 'Shop',
          configurationId: 'shop',
          configuration: fromPlain({ parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } }),
        });
        clock = new Date('2030-01-07T10:20:10.000Z');
      });
      afterEach(() => opened.dispose());

      it('an idle second costs one query and no cron evaluation, with 3 schedules as with 300', async () => {
        const db = counting(opened.backend.db);
        const cron = countingCron();
        const t = ticker({ db: db.db, cron: cron.cron });
        // daily ticks at distinct times, none in the seconds looked at
        const add = async (from: number, to: number) => {
          for (let i = from; i < to; i++)
            await activate(`c${i}`, definition(`${i % 60} ${Math.floor(i / 60) % 24} * * *`));
        };
        const idleSeconds = async () => {
          const work: Array<{ statements: number; rows: number; evaluations: number }> = [];
          for (let i = 0; i < 3; i++) {
            const [statements, rows, evaluations] = [db.statements(), db.rows(), cron.evaluations()];
            later(1000);
            await t.ticker.check();
            work.push({
              statements: db.statements() - statements,
              rows: db.rows() - rows,
              evaluations: cron.evaluations() - evaluations,
            });
          }
          return work;
        };

        await add(0, 3);
        let evaluations = cron.evaluations();
        await t.ticker.check();
        assert.equal(cron.evaluations() - evaluations, 3, 'each next tick computed once when read');
        const few = await idleSeconds();

        await add(3, 300);
        evaluations = cron.evaluations();
        const statements = db.statements();
        await t.ticker.check();
        assert.equal(cron.evaluations() - evaluations, 297, 'only the new schedules are evaluated');
        // the revision, the changed ones (one page), their latest ticks, the count
        assert.ok(db.statements() - statements <= 5, `${db.statements() - statements} statements`);
        const many = await idleSeconds();

        // the latest revision: one row
        assert.deepEqual(few, [
          { statements: 1, rows: 1, evaluations: 0 },
          { statements: 1, rows: 1, evaluations: 0 },
          { statements: 1, rows: 1, evaluations: 0 },
        ]);
        assert.deepEqual(many, few, 'the same work with 100 times the schedules');
        assert.match(t.log(), /Schedules loaded: 3 \(3 firing; the next tick /);
      });

      it('notices a change made anywhere at its next check: a new cron, disabled, enabled, deleted', async () => {
        const cron = countingCron();
        const t = ticker({ cron: cron.cron });
        clock = new Date('2030-01-01T00:00:00.500Z');
        const s = await activate('every', definition('0 * * * *'));
        await t.ticker.check();
        later(1000);
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), [], 'hourly: nothing due');

        // another process re-activates it every 2 seconds: fired from the next check on
        await activate('every', definition('*/2 * * * * *'));
        clock = new Date('2030-01-01T00:00:02.100Z');
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), ['2030-01-01T00:00:02.000Z']);

        await activate('every', definition('*/2 * * * * *', { state: 'disabled' }));
        clock = new Date('2030-01-01T00:00:04.100Z');
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), ['2030-01-01T00:00:02.000Z'], 'disabled: not fired');

        await activate('every', definition('*/2 * * * * *'));
        clock = new Date('2030-01-01T00:00:06.100Z');
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), ['2030-01-01T00:00:02.000Z', '2030-01-01T00:00:06.000Z']);
        assert.match(
          t.log(),
          /the tick of 2030-01-01T00:00:04\.000Z was missed \(no worker ran, or the schedule was disabled\); not made up, next 2030-01-01T00:00:06\.000Z/,
        );

        assert.equal(await new ScheduleRepository(opened.backend.db).remove(token.projectId, s.id), true);
        const evaluations = cron.evaluations();
        clock = new Date('2030-01-01T00:00:08.100Z');
        await t.ticker.check();
        later(2000);
        await t.ticker.check();
        assert.equal(cron.evaluations(), evaluations, 'a deleted schedule is forgotten');
        const jobs = await new JobRepository(opened.backend.db).search(token.projectId, {
          limit: 10,
          offset: 0,
          sortBy: 'id',
          sortOrder: 'asc',
        });
        assert.equal(jobs.length, 2);
      });

      it('a stored cron that never fires is skipped and said once, costing no evaluation; activation refuses it', async () => {
        const cron = countingCron();
        const t = ticker({ cron: cron.cron });
        // as an older gex stored it
        const never = await activate('never', definition('0 0 31 4,6,9,11 *'));
        for (let i = 0; i < 5; i++) {
          await t.ticker.check();
          later(1000);
        }
        assert.equal(cron.evaluations(), 0);
        const said = t
          .log()
          .match(/Schedule \d+ \(never\) is skipped: its cron "0 0 31 4,6,9,11 \*" never fires: [^\n]*/g);
        assert.equal(said?.length, 1, t.log());
        assert.match(
          said[0],
          /day of month 31 does not occur in month 4,6,9,11 \(at most 30 days\); fix its configuration/,
        );
        assert.deepEqual(await executions(never.id), []);

        // a cron that cannot fire is refused where a schedule is activated (the API, gex schedules add)
        const store = opened.backend.session(token);
        const config = await store.createConfiguration(SCHEDULER_COMPONENT_ID, {
          name: 'never',
          configuration: fromPlain({
            schedule: { cronTab: '0 0 31 4,6,9,11 *', timezone: 'Europe/Prague' },
            target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
          }),
        });
        await assert.rejects(
          activateSchedule(store, token, new ScheduleRepository(opened.backend.db), config.id),
          (error) => {
            assert.ok(error instanceof StoreError);
            assert.equal(error.status, 400);
            assert.equal(error.details?.[0].key, 'schedule.cronTab');
            assert.match(error.message, /never fires: day of month 31 does not occur in month 4,6,9,11/);
            return true;
          },
        );
      });

      it('across DST changes in Prague: a daily 02:30 fires at 03:30 on the spring day, once on the autumn day', async () => {
        const t = ticker();
        clock = new Date('2026-03-28T12:00:00.000Z');
        const s = await activate('dst', definition('30 2 * * *'));
        // a check every half hour, half a second after it
        const checkUntil = async (end: string) => {
          while (clock < new Date(end)) {
            clock = new Date(Math.floor(clock.getTime() / 1_800_000) * 1_800_000 + 1_800_500);
            await t.ticker.check();
          }
        };
        await checkUntil('2026-03-30T06:00:00Z');
        assert.deepEqual(await executions(s.id), [
          '2026-03-29T01:30:00.000Z', // 03:30 CEST: 02:30 did not exist
          '2026-03-30T00:30:00.000Z', // 02:30 CEST
        ]);
        await new ScheduleRepository(opened.backend.db).remove(token.projectId, s.id);
        clock = new Date('2026-10-24T12:00:00.000Z');
        const autumn = await activate('dst-autumn', definition('30 2 * * *'));
        await checkUntil('2026-10-26T06:00:00Z');
        assert.deepEqual(await executions(autumn.id), [
          '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); the repeated one (CET) does not fire
          '2026-10-26T01:30:00.000Z',
        ]);
        assert.doesNotMatch(t.log(), /missed/);
      });

      it('after an hour with no ticker, a per-second schedule fires its due tick and logs the missed ones, counted up to 10', async () => {
        const t = ticker();
        clock = new Date('2030-01-01T00:00:00.300Z');
        const s = await activate('second', definition('* * * * * *'));
        later(1000);
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), ['2030-01-01T00:00:01.000Z']);
        clock = new Date('2030-01-01T01:00:01.300Z');
        await t.ticker.check();
        assert.deepEqual(await executions(s.id), ['2030-01-01T00:00:01.000Z', '2030-01-01T01:00:01.000Z']);
        assert.match(
          t.log(),
          /more than 10 ticks from 2030-01-01T00:00:02\.000Z until 2030-01-01T01:00:01\.000Z were missed \(no worker ran, or the schedule was disabled\); not made up, next 2030-01-01T01:00:01\.000Z/,
        );
      });

      it('ticks that fall together are fired in slices that let the event loop run between them', async () => {
        const t = ticker({ sliceMs: 0 });
        clock = new Date('2030-01-01T00:00:00.500Z');
        const ids: number[] = [];
        for (let i = 0; i < 20; i++) ids.push((await activate(`together${i}`, definition('*/2 * * * * *'))).id);
        await t.ticker.check(); // loads them
        clock = new Date('2030-01-01T00:00:02.100Z');
        let turns = 0;
        let done = false;
        const spin = () => {
          turns++;
          if (!done) setImmediate(spin);
        };
        setImmediate(spin);
        await t.ticker.check();
        done = true;
        for (const id of ids) assert.deepEqual(await executions(id), ['2030-01-01T00:00:02.000Z']);
        assert.ok(turns >= ids.length, `the event loop ran ${turns} times while ${ids.length} ticks were fired`);
      });
    });
  }
});
