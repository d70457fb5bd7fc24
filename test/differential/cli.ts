/**
 * The differential tester: runs generated cases (and GE's example folders) on the reference Generic
 * Extractor and on gex, compares exit codes, requests and every output byte, and shrinks each
 * difference to a small case. See docs/differential-testing.md.
 *
 *   GEX_GE_REFERENCE=path/to/run.sh node dist/test/differential/cli.js --seed 1 --cases 500
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { compareSides } from './compare.js';
import { explainingDeviation } from './deviations.js';
import { caseOfSeed, runDifferential, type CaseReport } from './differential.js';
import { GE_REFERENCE_VARIABLE, gexEngine, logTail, referenceCommand, referenceEngine } from './engines.js';
import { exampleFolder, listExamples, loadRecordings, replay } from './examples.js';
import { saveRegression } from './regression-case.js';
import { describeCase, summarize } from './report.js';
import { dataFolderFiles, runCase, runOnEngines } from './run-case.js';

/** Examples whose requests or output depend on the clock, a nonce or a network gex cannot reach here. */
export const UNREPRODUCIBLE_EXAMPLES: Record<string, string> = {
  '091': 'output depends on the current time',
  '102': 'OAuth 1.0 nonce and timestamp',
  '104': 'OAuth 2.0 MAC nonce and timestamp',
  '109': 'request carries the current date',
  '110': 'request carries the current date',
  '131': 'SSH tunnel',
  '133': 'SSH tunnel',
  '141': 'HTTPS with a self-signed certificate',
  '142': 'HTTPS with a client certificate',
};

const argv = await yargs(hideBin(process.argv))
  .option('seed', { type: 'number', default: 1, describe: 'the first case seed (case i uses seed + i)' })
  .option('cases', { type: 'number', default: 100 })
  .option('parallel', {
    type: 'number',
    default: Math.max(1, os.availableParallelism()),
    describe: 'cases at the same time',
  })
  .option('shrink-runs', { type: 'number', default: 60, describe: 'the most runs spent shrinking one difference' })
  .option('timeout', { type: 'number', default: 60, describe: 'seconds per engine run' })
  .option('examples', { type: 'string', describe: 'also run every example folder of this GE examples root' })
  .option('only-examples', { type: 'boolean', default: false })
  .option('show', { type: 'number', describe: 'print the data folder and API of a seed and exit' })
  .option('keep', {
    type: 'string',
    describe: 'run in this folder and keep the data folders (for one seed: slot-0/ge, slot-0/gex)',
  })
  .option('save', {
    type: 'string',
    describe:
      "save each shrunk difference with the reference's result here, as a regression case for test/differential/regressions",
  })
  .option('record', {
    type: 'string',
    describe:
      "save every case of the seed range with the reference's result here (no comparison), e.g. to freeze a fixed case as a regression",
  })
  .option('report', { type: 'string', describe: 'write every case report as JSON to this file' })
  .strict()
  .parse();

if (argv.show !== undefined) {
  console.log(describeCase(argv.show, caseOfSeed(argv.show), []));
  process.exit(0);
}

const command = referenceCommand();
if (!command) {
  console.error(
    `SKIPPED: the differential test needs the reference Generic Extractor; set ${GE_REFERENCE_VARIABLE} to a command that runs it on a data folder.`,
  );
  process.exit(2);
}
const reference = referenceEngine(command);
const gex = gexEngine();
const workDir = argv.keep ? path.resolve(argv.keep) : await mkdtemp(path.join(os.tmpdir(), 'gex-differential-'));
const timeoutMs = argv.timeout * 1000;
let failed = 0;
const json: unknown[] = [];

if (argv.examples) {
  const root = path.resolve(argv.examples);
  const play = replay(await loadRecordings(root));
  let same = 0;
  let skipped = 0;
  const examples = await listExamples(root);
  for (const example of examples) {
    const why = UNREPRODUCIBLE_EXAMPLES[example.name.slice(0, 3)];
    if (why) {
      skipped++;
      console.log(`example ${example.name}: skipped (${why})`);
      continue;
    }
    const [ge, ours] = await runOnEngines(
      await exampleFolder(example),
      play,
      [reference, gex],
      path.join(workDir, 'example'),
      timeoutMs,
    );
    const differences = compareSides(ge, ours);
    const deviation = explainingDeviation(ge, ours, differences);
    json.push({ example: example.name, differences, deviation: deviation?.id });
    if (differences.length === 0) same++;
    else if (deviation) console.log(`example ${example.name}: listed deviation ${deviation.id}`);
    else {
      failed++;
      console.log(
        `example ${example.name}: DIFFERENT\n${differences.map((d) => d.detail).join('\n')}\n--- GE log\n${logTail(ge.log)}\n--- gex log\n${logTail(ours.log)}`,
      );
    }
  }
  console.log(
    `examples: ${examples.length} (${same} same, ${skipped} skipped as unreproducible, ${examples.length - same - skipped - failed} listed deviations, ${failed} different)`,
  );
}

if (argv.record) {
  for (let seed = argv.seed; seed < argv.seed + argv.cases; seed++) {
    const c = caseOfSeed(seed);
    const [ge] = await runCase(c, [reference], path.join(workDir, 'record'), timeoutMs);
    await saveRegression(argv.record, seed, c, ge);
    console.log(
      `recorded seed ${seed}: GE exit ${ge.code}, ${ge.requests.length} requests, ${ge.outputs.size} output files`,
    );
  }
} else if (!argv['only-examples']) {
  const started = Date.now();
  const reports: CaseReport[] = await runDifferential({
    seed: argv.seed,
    cases: argv.cases,
    parallel: argv.parallel,
    shrinkRuns: argv['shrink-runs'],
    timeoutMs,
    workDir,
    keep: argv.keep !== undefined,
    reference,
    gex,
    onCase: (report, done) => {
      if (report.outcome === 'different') {
        const shrunk = report.shrunk!;
        console.log(
          `${describeCase(report.seed, shrunk.case, shrunk.differences, shrunk.logs)}\n(shrunk in ${shrunk.runs} runs)\n`,
        );
        if (argv.save) void saveRegression(argv.save, report.seed, shrunk.case, shrunk.reference);
      }
      if (done % 25 === 0 || done === argv.cases)
        console.error(`… ${done}/${argv.cases} cases in ${Math.round((Date.now() - started) / 1000)} s`);
    },
  });
  failed += reports.filter((r) => r.outcome === 'different').length;
  json.push(
    ...reports.map((r) => ({
      ...r,
      shrunk: r.shrunk && {
        ...r.shrunk,
        reference: undefined,
        files: Object.fromEntries(dataFolderFiles(r.shrunk.case, 'http://127.0.0.1:PORT')),
      },
    })),
  );
  console.log(summarize(reports));
}
if (argv.report) await writeFile(argv.report, JSON.stringify(json, null, 2));
process.exitCode = failed > 0 ? 1 : 0;
