import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { runGex } from '../support/cli.js';
import { makeDataDir } from '../support/extraction.js';
import { HoldingApi, pagedParameters } from '../support/gex-process.js';
import { startGexInTerminal } from '../support/terminal.js';

/** One progress draw: back to the line start, clear it, the text (never a line break). */
const DRAW = /\r\x1b\[K(\[[^\r\n]*)/g;

describe('gex run: the progress line on a real terminal (pseudo-terminal via script)', function () {
  this.timeout(60_000);
  let api: HoldingApi;
  let dir: string;

  before(function () {
    assert.doesNotThrow(
      () => execFileSync('script', ['--version']),
      'util-linux script is needed for the terminal tests',
    );
  });

  beforeEach(async () => {
    // pages 1 and 2 answer at once, page 3 waits for release() and then ends the job
    api = await HoldingApi.start(3);
    dir = await makeDataDir({ parameters: pagedParameters(api) });
  });
  afterEach(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('updates one line in place while pages arrive and while the API is slow, then clears it before the final lines', async () => {
    const gex = startGexInTerminal(['run', '--data-dir', dir], {}, 100);
    await gex.waitFor(/\r\x1b\[K\[0:00\] users: 1 page, 1 record, [\d,]+ records\/s/);
    // page 3 is held: the elapsed time still moves (a redraw every second)
    await gex.waitFor(/\r\x1b\[K\[0:0[1-9]\] users: 2 pages, 2 records, [\d,]+ records\/s/);
    api.release();
    const { code } = await gex.exited;
    const output = gex.output();
    assert.equal(code, 0, output);

    const draws = [...output.matchAll(DRAW)].map((m) => m[1]);
    assert.ok(draws.length >= 2, output);
    for (const draw of draws) assert.ok(draw.length < 100, `cut to the terminal width: ${draw}`);
    // every draw is cleared before a log line is printed over it, and nothing is drawn after the last line
    const lines = output.split('\r\n').filter((l) => l !== '');
    const last = lines.at(-1)!;
    assert.match(
      last,
      /INFO {2}Extraction finished: 1 table, 2 records, 3 requests in [\d,]+\.\d s\. Tables are in .*\/out\/tables$/,
    );
    assert.ok(!last.includes('\x1b') && !last.includes('\r'), JSON.stringify(last));
    assert.match(output, /INFO {2}Wrote table b\.users: 2 rows\r\n/);
    const lastDraw = output.lastIndexOf('\r\x1b[K[');
    assert.ok(output.indexOf('\r\x1b[K', lastDraw + 1) > lastDraw, 'the last draw was cleared');
  });

  it('shows an ETA when a limitStop says where the job ends', async () => {
    const parameters = pagedParameters(api) as { api: { pagination: Record<string, unknown> } };
    parameters.api.pagination.limitStop = { count: 4 };
    const limited = await makeDataDir({ parameters });
    try {
      const gex = startGexInTerminal(['run', '--data-dir', limited], {}, 100);
      // 2 of 4 records after two pages, page 3 held: the rest of the job is timed
      await gex.waitFor(/\r\x1b\[K\[0:0\d\] users: 2 pages, 2 records, [\d,]+ records\/s, ETA \d+:\d\d/);
      api.release();
      const { code } = await gex.exited;
      assert.equal(code, 0, gex.output());
    } finally {
      await rm(limited, { recursive: true, force: true });
    }
  });

  it('draws nothing when stdout and stderr are not a terminal', async () => {
    api.release();
    const result = await runGex(['run', '--data-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Extraction finished: 1 table, 2 records, 3 requests/);
    for (const text of [result.stdout, result.stderr]) {
      assert.ok(!text.includes('\r') && !text.includes('\x1b'), JSON.stringify(text));
    }
  });
});
