import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { call, type Json } from '../../support/queue.js';
import { tagConfigs } from '../../support/flow-setup.js';

const KEY = { GEX_MASTER_KEY: '6c'.repeat(32) };
const FLOWS = '/v2/storage/branch/default/components/keboola.orchestrator/configs';
/** a phase's name that would clear the screen and forge a line if printed raw */
const HOSTILE = 'Load\n\u001b[2J12\tsuccess\u202e';

/**
 * `gex jobs run --component keboola.orchestrator ID --wait` and `gex jobs show` of a flow, on the
 * embedded store and against a server (real `gex serve --workers`, every task a real `gex run`):
 * the exit codes of a flow's end, the warning said on stderr, the tree printed with every value
 * made safe, and the same output in both modes.
 */
describe('gex jobs of a flow: run --wait and show print its tree (both modes)', function () {
  this.timeout(180_000);
  let dir: string;
  let store: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string };
  let token: string;
  const configs: Record<string, string> = {};
  const flows: Record<string, string> = {};
  const modes = {
    embedded: (args: string[], env: NodeJS.ProcessEnv = {}) =>
      runGex(['jobs', ...args, '--store', store], { ...KEY, ...env }),
    remote: (args: string[], env: NodeJS.ProcessEnv = {}) =>
      runGex(
        ['jobs', ...args],
        { GEX_STORE: '', GEX_MASTER_KEY: '', KBC_URL: served.url, KBC_TOKEN: token, ...env },
        { cwd: dir },
      ),
  };
  const task = (id: string, phase: string, tag: string, more: Json = {}) => ({
    id,
    name: `task ${id}`,
    phase,
    task: { componentId: 'ex-generic-v2', configId: configs[tag], mode: 'run' },
    ...more,
  });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-cli-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        await sleep(150);
        if (tag === 'bad') return { status: 404, body: { error: 'no such users' } };
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '3'], KEY);
    Object.assign(configs, await tagConfigs(served.url, token, api.url, ['a', 'b', 'c', 'd', 'bad'], 'fc'));
    const flow = async (name: string, configuration: Json) => {
      const created = await call(served.url, token, 'POST', FLOWS, { name, configuration });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      flows[name] = String(created.body.id);
    };
    await flow('ok', {
      phases: [
        { id: 1, name: 'Extract', dependsOn: [] },
        { id: 2, name: HOSTILE, dependsOn: [1] },
      ],
      tasks: [
        task('10', '1', 'a'),
        task('11', '1', 'b', { name: 'Shop\r\u001b[1Aforged' }),
        task('12', '2', 'c'),
        task('13', '2', 'd', { enabled: false }),
      ],
    });
    const twoPhases = [
      { id: 'x', name: 'X' },
      { id: 'y', name: 'Y', dependsOn: ['x'] },
    ];
    await flow('warning', {
      phases: twoPhases,
      tasks: [task('1', 'x', 'bad', { continueOnFailure: true }), task('2', 'y', 'a')],
    });
    await flow('error', { phases: twoPhases, tasks: [task('1', 'x', 'bad'), task('2', 'y', 'a')] });
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The root job's id and the lines after its ended line (its message, then the tree). */
  function ended(stdout: string, config: string): { root: string; after: string[] } {
    const lines = stdout.trimEnd().split('\n');
    const root = lines[0].split('\t')[0];
    assert.match(lines[0], new RegExp(`^${root}\\tprocessing\\tkeboola\\.orchestrator ${config}\\t`), stdout);
    const at = lines.findIndex((l, i) => i > 0 && l.startsWith(`${root}\t`));
    assert.ok(at > 0, stdout);
    return { root, after: lines.slice(at) };
  }

  for (const [mode, gex] of Object.entries(modes)) {
    describe(mode, () => {
      it('run --component keboola.orchestrator ID --wait: exit 0 and the tree; a hostile name is shown escaped', async () => {
        const r = await gex(['run', '--component', 'keboola.orchestrator', flows.ok, '--wait']);
        assert.equal(r.code, 0, r.stderr);
        const { root, after } = ended(r.stdout, flows.ok);
        assert.match(after[0], new RegExp(`^${root}\\tsuccess\\tkeboola\\.orchestrator ${flows.ok}\\t\\S+ \\d+s$`));
        assert.equal(after[1], '  The flow finished.');
        const tree = after.slice(2);
        const cell = '\\d+s';
        const expected = [
          /^ {2}phase 1 Extract\tsuccess\tjob \d+$/,
          new RegExp(`^ {4}task 10 task 10\\tex-generic-v2 ${configs.a}\\tjob \\d+\\tsuccess\\t${cell}$`),
          new RegExp(
            `^ {4}task 11 "Shop\\\\r\\\\u001b\\[1Aforged"\\tex-generic-v2 ${configs.b}\\tjob \\d+\\tsuccess\\t${cell}$`,
          ),
          /^ {2}phase 2 "Load\\n\\u001b\[2J12\\tsuccess\\u202e"\tsuccess\tjob \d+$/,
          new RegExp(`^ {4}task 12 task 12\\tex-generic-v2 ${configs.c}\\tjob \\d+\\tsuccess\\t${cell}$`),
          /^ {4}task 13 task 13\tno job\tskipped$/,
        ];
        assert.equal(tree.length, expected.length, r.stdout);
        tree.forEach((line, i) => assert.match(line, expected[i], r.stdout));
        assert.ok(!/[\u001b\r\u202e]/.test(r.stdout), 'no raw control character printed');
        assert.match(r.stderr, new RegExp(`^Job ${root}: success$`, 'm'));
        assert.doesNotMatch(r.stderr, /warning/);
      });

      it('run --wait of a flow whose task fails with continueOnFailure: exit 0, and stderr says the flow ended with a warning', async () => {
        const r = await gex(['run', flows.warning, '--component', 'keboola.orchestrator', '--wait']);
        assert.equal(r.code, 0, r.stderr);
        assert.match(
          r.stderr,
          /^The flow ended with a warning: A task failed; the flow went on past it \(continueOnFailure\)\.$/m,
        );
        const { after } = ended(r.stdout, flows.warning);
        assert.match(after[0], /\twarning\t/);
        assert.match(after[2], /^ {2}phase x X\twarning\tjob \d+$/);
        assert.match(
          after[3],
          new RegExp(`^ {4}task 1 task 1\\tex-generic-v2 ${configs.bad}\\tjob \\d+\\terror\\t\\d+s$`),
        );
        assert.match(after[4], /^ {6}.*404/, 'the failed task says why');
        assert.match(after[5], /^ {2}phase y Y\tsuccess\tjob \d+$/);
        assert.match(after[6], /^ {4}task 2 task 2\t.*\tsuccess\t\d+s$/);
      });

      it('run --wait of a flow whose task fails: exit 1 (a user error), the next phase cancelled', async () => {
        const r = await gex(['run', flows.error, '--component-id', 'keboola.orchestrator', '--wait']);
        assert.equal(r.code, 1, r.stderr);
        assert.doesNotMatch(r.stderr, /warning/);
        const { after } = ended(r.stdout, flows.error);
        assert.match(after[0], /\terror\t/);
        assert.equal(after[1], '  A task failed, so the phases after it did not run.');
        assert.match(after[2], /^ {2}phase x X\terror\tjob \d+$/);
        assert.match(after[3], /^ {4}task 1 task 1\t.*\terror\t\d+s$/);
        assert.match(after.at(-2)!, /^ {2}phase y Y\tcancelled\tjob \d+$/);
        assert.match(after.at(-1)!, /^ {4}task 2 task 2\tno job\tskipped$/);
      });
    });
  }

  // after the runs above (a suite's own tests run before its sub-suites)
  describe('show', () => {
    it('show prints the same tree in both modes; --json is the job object only; list --parent-run-id lists the tree', async () => {
      const listed = JSON.parse((await modes.remote(['list', '--json', '--limit', '500'])).stdout) as Json[];
      const root = listed.find((j) => j.type === 'orchestrationContainer' && j.config === flows.ok)!;
      assert.ok(root, `a run of the flow ${flows.ok}: ${JSON.stringify(listed.map((j) => [j.type, j.config]))}`);
      const over = await modes.remote(['show', root.id]);
      const local = await modes.embedded(['show', root.id]);
      assert.equal(over.code, 0, over.stderr);
      assert.equal(local.code, 0, local.stderr);
      assert.equal(over.stdout, local.stdout);
      assert.equal(over.stdout.trimEnd().split('\n').length, 2 + 6, over.stdout);
      assert.match(over.stdout, /^ {4}task 13 .*\tno job\tskipped$/m);

      const json = await modes.remote(['show', root.id, '--json']);
      const wire = (await call(served.url, token, 'GET', `/jobs/${root.id}`)).body;
      assert.deepEqual(JSON.parse(json.stdout), wire, 'the Queue API job object, nothing added');

      for (const gex of Object.values(modes)) {
        const tree = await gex(['list', '--parent-run-id', root.runId, '--json']);
        assert.equal(tree.code, 0, tree.stderr);
        const jobs = JSON.parse(tree.stdout) as Json[];
        assert.deepEqual(jobs.map((j) => j.type).sort(), [
          'phaseContainer',
          'phaseContainer',
          'standard',
          'standard',
          'standard',
        ]);
        assert.ok(jobs.every((j) => j.orchestrationJobId === root.id));
      }
      const bad = await modes.embedded(['list', '--parent-run-id', '1;drop']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /Not a run id: "1;drop"/);
    });

    it('a job that is no flow root prints as before: a task job with its message and what it moved, a phase job with its message', async () => {
      const listed = JSON.parse((await modes.remote(['list', '--json', '--limit', '500'])).stdout) as Json[];
      const taskJob = listed.find((j) => j.type === 'standard' && j.status === 'success')!;
      const phaseJob = listed.find((j) => j.type === 'phaseContainer' && j.status === 'success')!;
      for (const gex of Object.values(modes)) {
        const t = await gex(['show', taskJob.id]);
        assert.equal(t.code, 0, t.stderr);
        const [message, moved, ...rest] = t.stdout.trimEnd().split('\n').slice(1);
        assert.equal(message, '  Component processing finished.');
        assert.match(moved, /^ {2}Moved: 1 request, \d+ records? in /, 'a configuration without rows: no row lines');
        assert.ok(rest.length > 0 && rest.every((l) => l.startsWith('  ') && !l.includes('\t')), t.stdout);
        const p = await gex(['show', phaseJob.id]);
        assert.equal(p.code, 0, p.stderr);
        assert.match(
          p.stdout,
          new RegExp(`^${phaseJob.id}\\tsuccess\\tkeboola\\.orchestrator \\d+\\t[^\\n]*\\n( {2}[^\\n]*\\n)?$`),
        );
      }
    });

    it("against a hostile server: every value of the tree escaped, the search by the root's run id, paging bounded", async () => {
      let base = '';
      const evil = 'x\u001b]0;owned\u0007\ny';
      const job = (id: number, more: Json) => ({
        id: String(id),
        runId: String(id),
        parentRunId: '',
        status: 'success',
        component: evil,
        config: evil,
        configRowIds: [],
        createdTime: evil,
        durationSeconds: 1,
        isFinished: true,
        type: 'standard',
        result: { message: evil },
        ...more,
      });
      const root = job(7, {
        type: 'orchestrationContainer',
        result: {
          message: evil,
          phases: [{ id: evil, name: evil }],
          tasks: [{ id: evil, name: evil, phaseId: evil, jobId: null, status: evil }],
        },
      });
      const children = [
        job(8, { runId: '7.8', parentRunId: '7', type: 'phaseContainer', status: evil, configData: { phaseId: evil } }),
        job(9, { runId: '7.8.9', parentRunId: '7.8', orchestrationTaskId: evil, status: 'error' }),
      ];
      let endless = false;
      const searches: URLSearchParams[] = [];
      const stack = await startFixtureServer({
        handler: (r) => {
          const url = new URL(r.url, 'http://x');
          if (url.pathname === '/v2/storage') return { body: { services: [{ id: 'queue', url: `${base}/queue/` }] } };
          if (url.pathname === '/queue/jobs/7') return { body: root };
          if (url.pathname === '/queue/search/jobs') {
            searches.push(url.searchParams);
            if (!endless) return { body: children };
            return { body: Array.from({ length: 500 }, (_, i) => job(100 + i, { parentRunId: '7' })) };
          }
          return undefined;
        },
      });
      base = stack.url;
      try {
        const shown = await modes.remote(['show', '7'], { KBC_URL: stack.url });
        assert.equal(shown.code, 0, shown.stderr);
        assert.ok(!/[\u001b\u0007]/.test(shown.stdout), shown.stdout);
        // each value one quoted token, its control characters escaped
        const q = JSON.stringify(evil);
        const lines = shown.stdout.trimEnd().split('\n');
        assert.equal(lines.length, 6, shown.stdout);
        assert.deepEqual(lines.slice(2), [
          `  phase ${q} ${q}\t${q}\tjob 8`,
          `    task ${q} ${q}\t${q} ${q}\tjob 9\terror\t1s`,
          `      ${q}`,
          `    task ${q} ${q}\tno job\t${q}`,
        ]);
        assert.deepEqual([...searches[0].entries()].sort(), [
          ['limit', '500'],
          ['parentRunId', '7'],
          ['sortBy', 'id'],
          ['sortOrder', 'asc'],
        ]);
        // a server that answers a full page every time: read up to the bound, then said
        endless = true;
        searches.length = 0;
        const capped = await modes.remote(['show', '7'], { KBC_URL: stack.url });
        assert.equal(capped.code, 0, capped.stderr);
        assert.equal(searches.length, 20);
        assert.equal(searches[19].get('offset'), '9500');
        assert.match(capped.stdout, /\n {2}\(only the first 10000 jobs of the flow are shown\)\n$/);
      } finally {
        await stack.close();
      }
    });
  });
});
