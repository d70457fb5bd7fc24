import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, startServe } from '../../support/cli.js';
import { call } from '../../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6a'.repeat(32) };
const configs = (component: string) => `/v2/storage/branch/default/components/${component}/configs`;

/** Flow configurations through a real gex serve and the CLI: stored and versioned, refused whole with the path. */
describe('flow configurations (gex serve, gex configs)', function () {
  this.timeout(60_000);
  let dir: string;
  let store: string;
  let served: { child: ChildProcess; url: string };
  let token: string;

  const legacy = {
    phases: [
      { id: 1, name: 'Extract', dependsOn: [] },
      { id: '2', name: 'Load', dependsOn: [1] },
    ],
    tasks: [{ id: 10, name: 'Shop', phase: 1, task: { componentId: 'ex-generic-v2', configId: 'shop', mode: 'run' } }],
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-configs-'));
    store = path.join(dir, 'store.sqlite');
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '0'], KEY);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('stores, versions and reads the configurations of both flow components (registered in every store)', async () => {
    for (const component of ['keboola.orchestrator', 'keboola.flow']) {
      const body =
        component === 'keboola.flow'
          ? { phases: [{ id: 'a', name: 'A', next: [{ id: 'end', goto: null }] }], tasks: [] }
          : legacy;
      const created = await call(served.url, token, 'POST', configs(component), {
        name: 'Nightly',
        configuration: body,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const read = await call(served.url, token, 'GET', `${configs(component)}/${String(created.body.id)}`);
      assert.deepEqual(read.body.configuration, body);
      assert.equal(read.body.version, 1);
    }
  });

  it('refuses a create or an update that breaks a rule, naming each path, and stores nothing', async () => {
    const refused = await call(served.url, token, 'POST', configs('keboola.orchestrator'), {
      name: 'Bad',
      configurationId: 'bad',
      configuration: {
        phases: [{ id: 1, name: 'A', dependsOn: [1] }],
        tasks: [{ id: 1, name: 'T', phase: 9, task: {} }],
      },
    });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.error), /phases\[0\]\.dependsOn\[0\]: a phase cannot depend on itself/);
    assert.match(String(refused.body.error), /tasks\[0\]\.phase: no phase has the id "9"/);
    assert.equal((await call(served.url, token, 'GET', `${configs('keboola.orchestrator')}/bad`)).status, 404);

    const created = await call(served.url, token, 'POST', configs('keboola.orchestrator'), {
      name: 'Good',
      configuration: legacy,
    });
    const id = String(created.body.id);
    const cycle = {
      ...legacy,
      phases: [
        { id: 1, name: 'A', dependsOn: ['2'] },
        { id: '2', name: 'B', dependsOn: [1] },
      ],
    };
    const update = await call(served.url, token, 'PUT', `${configs('keboola.orchestrator')}/${id}`, {
      configuration: JSON.stringify(cycle),
    });
    assert.equal(update.status, 400);
    assert.match(String(update.body.error), /dependsOn forms a cycle/);
    const after = await call(served.url, token, 'GET', `${configs('keboola.orchestrator')}/${id}`);
    assert.equal(after.body.version, 1);
    assert.deepEqual(after.body.configuration, legacy);
  });

  it('refuses a flow that runs itself, through gex configs as through the API', async () => {
    const self = {
      phases: [{ id: 'p', name: 'P' }],
      tasks: [{ id: 't', name: 'Me', phase: 'p', task: { componentId: 'keboola.orchestrator', configId: 'loop' } }],
    };
    const r = await runGex(
      [
        'configs',
        'create',
        '--component-id',
        'keboola.orchestrator',
        '--config-id',
        'loop',
        '--name',
        'Loop',
        '--set',
        `phases=${JSON.stringify(self.phases)}`,
        '--set',
        `tasks=${JSON.stringify(self.tasks)}`,
        '--store',
        store,
      ],
      KEY,
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /tasks\[0\]\.task\.componentId: a flow cannot run itself/);
    const list = await runGex(
      ['configs', 'list', '--component-id', 'keboola.orchestrator', '--json', '--store', store],
      KEY,
    );
    assert.ok(!list.stdout.includes('"loop"'), list.stdout);
  });
  it('gex flows validate checks a file with the same rules, each problem on its line; gex flows show draws a stored flow', async () => {
    const good = path.join(dir, 'good.json');
    const bad = path.join(dir, 'bad.json');
    await writeFile(good, JSON.stringify({ name: 'Nightly', configuration: legacy }));
    await writeFile(
      bad,
      JSON.stringify({ phases: [{ id: 'p', name: 'P', next: [{ id: 'x', goto: 'nowhere' }] }], tasks: [] }),
    );
    const ok = await runGex(['flows', 'validate', good]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^Valid keboola\.orchestrator configuration: 2 phases, 1 task\.\nExtract \[phase 1\]\n {2}└─ Shop \[task 10\]: ex-generic-v2 shop\nLoad \[phase 2\]/,
    );
    const refused = await runGex(['flows', 'validate', bad]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /is not a valid keboola\.flow configuration:\n {2}phases\[0\]\.next\[0\]\.goto: no phase has the id "nowhere"/,
    );

    const created = await call(served.url, token, 'POST', configs('keboola.orchestrator'), {
      name: 'Shown\u001b[31m',
      configuration: legacy,
    });
    const shown = await runGex(['flows', 'show', String(created.body.id), '--store', store], KEY);
    assert.equal(shown.code, 0, shown.stderr);
    assert.ok(!shown.stdout.includes('\u001b'), shown.stdout);
    assert.match(shown.stdout, /\(keboola\.orchestrator \d+, version 1\)\nExtract \[phase 1\]/);
    const missing = await runGex(['flows', 'show', 'nope', '--store', store], KEY);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No flow "?nope"? in keboola\.orchestrator or keboola\.flow/);
  });
});
