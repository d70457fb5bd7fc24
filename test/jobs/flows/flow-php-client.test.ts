import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { repoRoot, runGex, startServe } from '../../support/cli.js';
import { call, type Json } from '../../support/queue.js';

const PHP_CLIENT = path.resolve(repoRoot, '..', 'shared', 'clients', 'job-queue-php');
const KEY = { GEX_MASTER_KEY: '6e'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const FLOWS = '/v2/storage/branch/default/components/keboola.orchestrator/configs';

/** `php` answers, or why not. */
function phpMissing(): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile('php', ['-v'], { timeout: 10_000 }, (error) => resolve(error ? `php: ${error.message}` : undefined)),
  );
}

/**
 * Keboola's official PHP Job Queue client (its strict DTO reads every job object) against a real
 * `gex serve --workers`: it creates a flow's job, polls it until it ends, and lists the flow's
 * tree by parentRunId, all and by type.
 */
describe("Keboola's PHP Queue client runs a flow and reads its job tree", function () {
  this.timeout(120_000);
  let dir: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string };
  let token: string;
  let flowId: string;

  before(async function () {
    const missing = !existsSync(path.join(PHP_CLIENT, 'autoload.php'))
      ? `Keboola's PHP Queue client is not at ${PHP_CLIENT}`
      : await phpMissing();
    if (missing) {
      console.warn(`\n  !!! SKIPPED: ${missing}\n`);
      this.skip();
    }
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-php-'));
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
    const tasks: Json[] = [];
    for (const [id, phase] of [
      ['10', 1],
      ['11', 1],
      ['20', 2],
    ] as const) {
      const configuration = {
        parameters: {
          api: { baseUrl: `${api.url}/v1/` },
          config: { outputBucket: `fp-${id}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag: id } }] },
        },
      };
      const created = await call(served.url, token, 'POST', CONFIGS, { name: id, configuration });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      tasks.push({
        id,
        name: `task ${id}`,
        phase,
        task: { componentId: 'ex-generic-v2', configId: String(created.body.id), mode: 'run' },
      });
    }
    const flow = await call(served.url, token, 'POST', FLOWS, {
      name: 'php',
      configuration: {
        phases: [
          { id: 1, name: 'First', dependsOn: [] },
          { id: 2, name: 'Second', dependsOn: [1] },
        ],
        tasks,
      },
    });
    assert.equal(flow.status, 201, JSON.stringify(flow.body));
    flowId = String(flow.body.id);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('createJob of keboola.orchestrator, getJob until it ends, listJobs by parentRunId (and type): the phases and tasks', async () => {
    const script = path.join(dir, 'flow.php');
    await writeFile(
      script,
      `<?php
require ${JSON.stringify(path.join(PHP_CLIENT, 'autoload.php'))};
use Keboola\\JobQueueClient\\{Client, JobData, JobType, ListJobsOptions};
[, $url, $token, $flow] = $argv;
$client = new Client($url . '/', $token);
$view = fn ($j) => [
  'id' => $j->id, 'runId' => $j->runId, 'parentRunId' => $j->parentRunId, 'type' => $j->type,
  'status' => $j->status, 'component' => $j->component, 'config' => $j->config,
  'orchestrationJobId' => $j->orchestrationJobId, 'orchestrationTaskId' => $j->orchestrationTaskId,
  'phaseId' => $j->configData['phaseId'] ?? null, 'isFinished' => $j->isFinished,
];
$out = [];
$root = $client->createJob(new JobData('keboola.orchestrator', $flow));
$out['created'] = $view($root);
$deadline = microtime(true) + 60;
do { usleep(200000); $done = $client->getJob($root->id); } while (!$done->isFinished && microtime(true) < $deadline);
$out['done'] = $view($done) + ['result' => $done->result];
$tree = $client->listJobs((new ListJobsOptions())->setParentRunId($root->runId)->setSortBy('id')->setSortOrder('asc'));
$out['tree'] = array_map($view, $tree);
$phases = $client->listJobs((new ListJobsOptions())->setParentRunId($root->runId)->setType(JobType::PHASE_CONTAINER));
$out['phases'] = array_map(fn ($j) => $j->id, $phases);
$tasks = $client->listJobs((new ListJobsOptions())->setParentRunId($root->runId)->setType(JobType::STANDARD));
$out['tasks'] = array_map(fn ($j) => $j->id, $tasks);
echo json_encode($out);
`,
    );
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile('php', [script, served.url, token, flowId], { timeout: 90_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}\n${out}`)) : resolve({ stdout: out, stderr: err }),
      ),
    );
    const out = JSON.parse(stdout) as Json;
    const root = out.created;
    assert.deepEqual(
      [root.type, root.status, root.component, root.config, root.parentRunId, root.runId, root.orchestrationJobId],
      ['orchestrationContainer', 'processing', 'keboola.orchestrator', flowId, '', root.id, null],
      stderr,
    );
    assert.equal(out.done.status, 'success', JSON.stringify(out.done.result));
    assert.equal(out.done.isFinished, true);
    assert.deepEqual(out.done.result.flow, { jobId: root.id });
    const tree = out.tree as Json[];
    const phases = tree.filter((j) => j.type === 'phaseContainer');
    const tasks = tree.filter((j) => j.type === 'standard');
    assert.equal(tree.length, 5, JSON.stringify(tree));
    assert.deepEqual(
      phases.map((p) => [p.phaseId, p.status, p.parentRunId, p.runId, p.orchestrationJobId, p.component]),
      [
        ['1', 'success', root.runId, `${root.runId}.${phases[0].id}`, root.id, 'keboola.orchestrator'],
        ['2', 'success', root.runId, `${root.runId}.${phases[1].id}`, root.id, 'keboola.orchestrator'],
      ],
    );
    const phaseOf = { '10': phases[0], '11': phases[0], '20': phases[1] } as Record<string, Json>;
    assert.deepEqual(tasks.map((t) => t.orchestrationTaskId).sort(), ['10', '11', '20']);
    for (const t of tasks) {
      const phase = phaseOf[t.orchestrationTaskId];
      assert.deepEqual(
        [t.status, t.component, t.orchestrationJobId, t.parentRunId, t.runId, t.isFinished],
        ['success', 'ex-generic-v2', root.id, phase.runId, `${phase.runId}.${t.id}`, true],
        JSON.stringify(t),
      );
    }
    assert.deepEqual([...out.phases].sort(), phases.map((p) => p.id).sort(), 'type=phaseContainer');
    assert.deepEqual([...out.tasks].sort(), tasks.map((t) => t.id).sort(), 'type=standard');
  });
});
