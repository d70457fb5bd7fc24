import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gexBin } from './cli.js';

/** Records the process's peak RSS (kB) into $GEX_TEST_RSS_FILE when it exits. */
const RECORD_PEAK_RSS = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(process.env.GEX_TEST_RSS_FILE, String(process.resourceUsage().maxRSS)));",
)}`;

/** `gex run --data-dir DIR` as a real process: exit code, output, and its peak RSS in MiB. */
export async function gexRunPeakRss(dataDir: string, env: NodeJS.ProcessEnv = {}) {
  const rssFile = path.join(dataDir, 'peak-rss');
  const childEnv: NodeJS.ProcessEnv = { ...process.env, GEX_TEST_RSS_FILE: rssFile, ...env };
  if (!('GEX_MAX_RESPONSE_SIZE' in env)) delete childEnv.GEX_MAX_RESPONSE_SIZE;
  const child = spawn(process.execPath, ['--import', RECORD_PEAK_RSS, gexBin, 'run', '--data-dir', dataDir], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { code, output, peakRssMiB: Number(await readFile(rssFile, 'utf8')) / 1024 };
}

/** A data folder's configuration: one job on `endpoint` of the API at `url`. */
export const oneJob = (url: string, endpoint: string) => ({
  parameters: { api: { baseUrl: `${url}/` }, config: { outputBucket: 'h', jobs: [{ endpoint }] } },
});
