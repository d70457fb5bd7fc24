import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { call, jobLogTail, untilFinished, type Json } from '../../support/queue.js';
import { tagConfigs } from '../../support/flow-setup.js';

const KEY = { GEX_MASTER_KEY: '6d'.repeat(32) };
const FLOWS = '/v2/storage/branch/default/components/keboola.orchestrator/configs';
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';

/**
 * A Scheduler API schedule whose target is a flow, fired by a real `gex serve` (a cron with a
 * seconds field fires within a second or two: no minute waited): the tick creates the flow's root
 * job, whose phases and tasks run to success.
 */
describe('a schedule that targets a flow (gex serve, Scheduler API)', function () {
  this.timeout(120_000);
  let dir: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string };
  let token: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-schedule-'));
    const store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        await sleep(150);
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '2'], KEY);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("fires the flow: a tick creates its root job (orchestrationContainer) and the flow's tasks run to success", async () => {
    const tasks: Json[] = [];
    const ids = await tagConfigs(served.url, token, api.url, ['a', 'b'], 'fs');
    for (const tag of ['a', 'b']) {
      tasks.push({
        id: tag,
        name: `task ${tag}`,
        phase: tag === 'a' ? 1 : 2,
        task: { componentId: 'ex-generic-v2', configId: ids[tag], mode: 'run' },
      });
    }
    const flow = await call(served.url, token, 'POST', FLOWS, {
      name: 'nightly',
      configuration: {
        phases: [
          { id: 1, name: 'Extract', dependsOn: [] },
          { id: 2, name: 'Then', dependsOn: [1] },
        ],
        tasks,
      },
    });
    assert.equal(flow.status, 201, JSON.stringify(flow.body));
    const schedulerConfig = await call(served.url, token, 'POST', SCHEDULER_CONFIGS, {
      name: 'the flow, every second',
      configuration: {
        schedule: { cronTab: '* * * * * *', timezone: 'UTC', state: 'enabled' },
        target: { componentId: 'keboola.orchestrator', configurationId: String(flow.body.id), mode: 'run' },
      },
    });
    assert.equal(schedulerConfig.status, 201, JSON.stringify(schedulerConfig.body));
    const schedule = await call(served.url, token, 'POST', '/schedules', {
      configurationId: String(schedulerConfig.body.id),
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    // the first tick's job; then the schedule is removed (at most a tick or two more fire meanwhile)
    let first: Json | undefined;
    for (const end = Date.now() + 20_000; !first && Date.now() < end;) {
      const executions = (await call(served.url, token, 'GET', `/schedules/${schedule.body.id}`)).body
        .executions as Json[];
      first = executions.at(-1);
      if (!first) await sleep(100);
    }
    assert.ok(first, 'the schedule fired within 20 s');
    assert.equal((await call(served.url, token, 'DELETE', `/schedules/${schedule.body.id}`)).status, 204);
    const root = (await call(served.url, token, 'GET', `/jobs/${first.jobId}`)).body;
    assert.deepEqual(
      [root.type, root.component, root.config, root.parentRunId],
      ['orchestrationContainer', 'keboola.orchestrator', String(flow.body.id), ''],
      JSON.stringify(root),
    );
    const done = await untilFinished(served.url, token, root.id, 60_000);
    assert.equal(
      done.status,
      'success',
      `${JSON.stringify(done.result)}\n${await jobLogTail(served.url, token, done)}`,
    );
    const tree = (
      await call(served.url, token, 'GET', `/search/jobs?parentRunId=${root.runId}&limit=100&sortOrder=asc`)
    ).body as unknown as Json[];
    assert.deepEqual(
      tree.map((j) => [j.type, j.orchestrationTaskId ?? null, j.status, j.orchestrationJobId]),
      [
        ['phaseContainer', null, 'success', root.id],
        ['phaseContainer', null, 'success', root.id],
        ['standard', 'a', 'success', root.id],
        ['standard', 'b', 'success', root.id],
      ],
    );
  });
});
