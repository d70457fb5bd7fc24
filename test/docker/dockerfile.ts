import { readFile } from 'node:fs/promises';

/** One instruction of a Dockerfile: the keyword, its raw argument text, and JSON-form arguments. */
export interface Instruction {
  keyword: string;
  args: string;
  json?: string[];
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

/** A small Dockerfile reader: comments, line continuations, stages (`FROM image AS name`). */
export async function readDockerfile(file: string): Promise<Stage[]> {
  const text = (await readFile(file, 'utf8')).replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [keyword, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ image: m![1], name: m![2], instructions: [] });
      continue;
    }
    let json: string[] | undefined;
    if (args.startsWith('[')) json = JSON.parse(args) as string[];
    stages[stages.length - 1].instructions.push({ keyword: upper, args, json });
  }
  return stages;
}
