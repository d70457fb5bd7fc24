import assert from 'node:assert/strict';
import { decodeJson } from '../../../src/json/index.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import type { NewJob } from '../../../src/jobs/job-record.js';
import { runRequest } from '../../support/flow-setup.js';
import { storeBackends } from '../../support/store.js';

/** A flow's jobs in the store, without processes: what a failed flow's error type says, and what is refused. */
describe('flow jobs in the store', function () {
  this.timeout(30_000);
  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let jobs: JobRepository;
      let job: (more: Partial<NewJob>) => NewJob;
      beforeEach(async () => {
        opened = await factory.open();
        jobs = new JobRepository(opened.backend.db);
        const token = (await opened.backend.createToken({ description: 'ci' })).info;
        job = (more) => runRequest(token, 'a', more);
      });
      afterEach(() => opened.dispose());

      const orchestrator = (configIds: string[]) =>
        job({
          componentId: 'keboola.orchestrator',
          configId: 'flow',
          flow: {
            definition: decodeJson(
              JSON.stringify({
                phases: [{ id: 1, name: 'One' }],
                tasks: configIds.map((configId, i) => ({
                  id: String(i + 1),
                  name: configId,
                  phase: 1,
                  task: { componentId: 'ex-generic-v2', configId, mode: 'run' },
                })),
              }),
            ),
            onlyTaskIds: null,
          },
        });
      const endTask = async (type: 'user' | 'application' | undefined) => {
        const claimed = await jobs.claimNext('test-worker');
        assert.ok(claimed, 'a task job to run');
        await jobs.finish(claimed.id, () =>
          type
            ? {
                status: 'error',
                result: {
                  message: `${type} failure`,
                  configVersion: null,
                  output: { tables: [] },
                  error: { type, message: `${type} failure` },
                },
              }
            : { status: 'success', result: { message: 'ok', configVersion: null, output: { tables: [] } } },
        );
      };

      it("a failed flow's error type is application when a task failed so (exit 2: a retry may help), else user", async () => {
        const lost = await jobs.create(orchestrator(['a', 'b']));
        await endTask('application');
        await endTask('user');
        const failed = await jobs.get(null, lost.id);
        assert.equal(failed?.status, 'error');
        assert.equal(failed?.result?.error?.type, 'application');

        const wrong = await jobs.create(orchestrator(['c']));
        await endTask('user');
        assert.equal((await jobs.get(null, wrong.id))?.result?.error?.type, 'user');
      });

      it('never stores a flow component as a run: a worker would read the flow as an extractor configuration', async () => {
        await assert.rejects(
          jobs.create(job({ componentId: 'keboola.flow', configId: 'x' })),
          /keboola\.flow job is a flow/,
        );
        assert.equal((await jobs.running()).length, 0);
      });
    });
  }
});
