import assert from 'node:assert/strict';

/** One sample of Prometheus' text exposition: its name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

/** The samples of a text exposition; every line must be a comment or a well-formed sample (asserted). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let m; (m = LABEL.exec(body)); consumed = LABEL.lastIndex)
      labels[m[1]] = m[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    assert.equal(consumed, body.length, `bad labels in ${JSON.stringify(line)}`);
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The type a `# TYPE` line gives `name`. */
export function typeOf(text: string, name: string): string | undefined {
  return new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
}

/** The value of the sample `name` with exactly these labels (for the labels it has); undefined: none. */
export function figure(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} appears ${found.length} times`);
  return found[0]?.value;
}
