import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ProcessMeasure {
  wallMs: number;
  peakRssKb: number;
  code: number;
}

/** Runs a command under /usr/bin/time and returns its wall time and peak RSS. */
export function measureProcess(command: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessMeasure> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', 'GEX_PEAK_RSS_KB=%M', ...command], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      const match = /GEX_PEAK_RSS_KB=(\d+)/.exec(stderr);
      if (!match) return reject(new Error(`no RSS reading: ${stderr.slice(-500)}`));
      if (code !== 0) return reject(new Error(`${command.join(' ')} exited ${code}: ${stderr.slice(-1000)}`));
      resolve({ wallMs, peakRssKb: Number(match[1]), code: code ?? -1 });
    });
  });
}

/** A data folder whose config pages through `baseUrl` + `items` with pagenum. */
export async function pagedDataDir(
  baseUrl: string,
  limit: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-'));
  await mkdir(path.join(dir, 'in'), { recursive: true });
  const config = {
    parameters: {
      api: { baseUrl: `${baseUrl}/`, pagination: { method: 'pagenum', limit, ...extra } },
      config: { outputBucket: 'bench', jobs: [{ endpoint: 'items', dataField: 'items' }] },
    },
  };
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
