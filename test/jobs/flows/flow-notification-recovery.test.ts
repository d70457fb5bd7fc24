import assert from 'node:assert/strict';
import os from 'node:os';
import { decodeJson } from '../../../src/json/index.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import type { NewJob } from '../../../src/jobs/job-record.js';
import type { DueNotification } from '../../../src/jobs/flows/flow-runs.js';
import { NOTIFICATION_LEASE_MS } from '../../../src/jobs/flows/flow-runs.js';
import { runRequest } from '../../support/flow-setup.js';
import { storeBackends } from '../../support/store.js';

/** A flow whose only phase is one webhook notification task. */
const definition = {
  phases: [{ id: 'p', name: 'Tell' }],
  tasks: [
    {
      id: 'tell',
      name: 'Tell',
      phase: 'p',
      task: {
        type: 'notification',
        title: 'Done',
        channel: { type: 'webhook', recipients: ['https://example.com/h'] },
      },
    },
  ],
};

/** The identity an earlier process with this pid wrote (a restarted container): one that is gone. */
const deadSender = () =>
  JSON.stringify({ host: os.hostname(), pid: process.pid, processStart: 'another-boot:1', instance: 'e'.repeat(16) });

/**
 * Issue 35 item 5 for notification tasks: the store knows which process sends a notification; one
 * in flight when its sender died is sent again (at once on this host, after the lease from
 * elsewhere), at most once more, and the first outcome recorded is the one that counts.
 */
describe('flow notifications in flight when their sender stops', function () {
  this.timeout(30_000);
  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let jobs: JobRepository;
      let due: DueNotification[];
      let flowJob: NewJob;
      beforeEach(async () => {
        opened = await factory.open();
        due = [];
        jobs = new JobRepository(opened.backend.db, { onNotifications: (n) => due.push(...n) });
        const token = (await opened.backend.createToken({ description: 'ci' })).info;
        flowJob = runRequest(token, 'f1', {
          componentId: 'keboola.flow',
          flow: { definition: decodeJson(JSON.stringify(definition)), onlyTaskIds: null },
        });
      });
      afterEach(() => opened.dispose());

      const notified = async (rootId: number) => {
        const row = await opened.backend.db.get<{ notified: string; wake_at: string | null }>(
          'SELECT notified, wake_at FROM flow_runs WHERE root_job_id = ?',
          [rootId],
        );
        return { notified: JSON.parse(row!.notified), wakeAt: row!.wake_at };
      };

      it('a live sender keeps it; past the lease it is sent again, and only the first outcome counts', async () => {
        const t0 = new Date('2026-12-02T10:00:00.000Z');
        const root = await jobs.create(flowJob, t0);
        assert.equal(due.length, 1);
        const first = await notified(root.id);
        assert.equal(first.notified.tell.status, 'processing');
        assert.ok(first.wakeAt, 'a flow with a notification in flight looks again');
        // its sender (this process) runs and the lease holds: nothing is sent twice
        assert.equal(await jobs.advanceDueFlows(new Date(t0.getTime() + 6000)), 1);
        assert.equal(due.length, 1);
        // the lease ran out (a sender on another host that never answered): sent again, once
        await jobs.advanceDueFlows(new Date(t0.getTime() + NOTIFICATION_LEASE_MS + 1000));
        assert.equal(due.length, 2);
        assert.deepEqual(due[1], due[0]);
        await jobs.notificationSent(root.id, 'tell', undefined, new Date(t0.getTime() + NOTIFICATION_LEASE_MS + 2000));
        const ended = await jobs.get(null, root.id);
        assert.equal(ended?.status, 'success');
        // the late sender reports a failure afterwards: the flow's truth stays
        await jobs.notificationSent(
          root.id,
          'tell',
          'timed out',
          new Date(t0.getTime() + NOTIFICATION_LEASE_MS + 3000),
        );
        const after = await jobs.get(null, root.id);
        assert.equal(after?.status, 'success');
        assert.equal((await notified(root.id)).notified.tell.status, 'success');
        assert.equal(due.length, 2);
      });

      it('a sender of this host that died: sent again at the next look, not after the lease', async () => {
        const t0 = new Date('2026-12-02T10:00:00.000Z');
        const root = await jobs.create(flowJob, t0);
        const { notified: state } = await notified(root.id);
        state.tell.by = deadSender();
        await opened.backend.db.run('UPDATE flow_runs SET notified = ? WHERE root_job_id = ?', [
          JSON.stringify(state),
          root.id,
        ]);
        await jobs.advanceDueFlows(new Date(t0.getTime() + 5000));
        assert.equal(due.length, 2, 'sent again within the in-flight check');
        const resent = (await notified(root.id)).notified.tell;
        assert.equal(resent.status, 'processing');
        assert.notEqual(resent.by, state.tell.by, 'now sent by this process');
      });

      it('a kill of the flow while a notification is in flight ends the flow, whatever the sender does', async () => {
        const root = await jobs.create(flowJob);
        const killed = await jobs.kill(root.projectId, root.id);
        assert.equal(killed?.status, 'terminated');
        await jobs.notificationSent(root.id, 'tell', undefined);
        assert.equal((await jobs.get(null, root.id))?.status, 'terminated');
      });
    });
  }
});
