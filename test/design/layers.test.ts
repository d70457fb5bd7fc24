import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';

// The layer rules of docs/design.md as CI checks them (npm run check:layers): they hold for src/,
// and they catch a planted climb, cycle and test import in a tree of the same shape.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const config = createRequire(import.meta.url)(path.join(repoRoot, '.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
  options: ICruiseOptions;
};

async function violationsIn(baseDir: string, tsConfig: string): Promise<string[]> {
  const { output } = await cruise(
    ['src'],
    {
      ...config.options,
      baseDir,
      ruleSet: { forbidden: config.forbidden },
      tsConfig: { fileName: tsConfig },
      validate: true,
      outputType: 'json',
    },
    undefined,
    { tsConfig: { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } } },
  );
  const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

describe('layers', function () {
  this.timeout(60_000);

  it('no module of src/ imports from a layer above it, and src/ has no import cycle', async () => {
    assert.deepEqual(await violationsIn(repoRoot, path.join(repoRoot, 'tsconfig.json')), []);
  });

  it('catches an import that climbs, a cycle (type imports too) and product code importing a test', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gex-layers-'));
    try {
      const files: Record<string, string> = {
        'src/store/backend.ts':
          "import { JobRepository } from '../jobs/job-repository.js';\nexport const b = JobRepository;\n",
        'src/jobs/job-repository.ts': 'export class JobRepository {}\n',
        'src/common/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
        'src/common/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
        'src/server/app.ts': "import { port } from '../../test/support/fixture.js';\nexport const p = port;\n",
        'test/support/fixture.ts': 'export const port = 1;\n',
        'src/cli/main.ts':
          "import { JobRepository } from '../jobs/job-repository.js';\nexport const m = JobRepository;\n",
      };
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
        writeFileSync(path.join(root, name), text);
      }
      const tsConfig = path.join(root, 'tsconfig.json');
      writeFileSync(
        tsConfig,
        JSON.stringify({
          compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
          include: ['src', 'test'],
        }),
      );
      const found = await violationsIn(root, tsConfig);
      assert.deepEqual(found, [
        'no-cycles: src/common/a.ts → src/common/b.ts',
        'product-not-tests: src/server/app.ts → test/support/fixture.ts',
        'store-stays-below: src/store/backend.ts → src/jobs/job-repository.ts',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
