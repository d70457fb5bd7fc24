import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { mergeRowConfiguration } from '../../src/runner/effective-configuration.js';
import { repoRoot, runGex } from '../support/cli.js';

interface StoredFixture {
  configuration: unknown;
  rows: Array<{ configuration: unknown }>;
}

describe('gex schema (CLI process) and schema/gex-config.schema.json', () => {
  let printed: string;
  let validate: ReturnType<Ajv['compile']>;

  before(async () => {
    const result = await runGex(['schema']);
    assert.equal(result.code, 0, result.stderr);
    printed = result.stdout;
    // deprecationMessage is an editor annotation (VS Code warns on unknown keys with it)
    validate = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false })
      .addKeyword('deprecationMessage')
      .compile(JSON.parse(printed));
  });

  it('the committed file is exactly what gex schema prints (regenerate: gex schema > schema/gex-config.schema.json)', async () => {
    assert.equal(await readFile(path.join(repoRoot, 'schema', 'gex-config.schema.json'), 'utf8'), printed);
    assert.equal(JSON.parse(printed).$schema, 'http://json-schema.org/draft-07/schema#');
  });

  it('every example configuration under fixtures/ validates: config.json, and each row of a stored configuration merged with its root', async () => {
    const config = JSON.parse(await readFile(path.join(repoRoot, 'fixtures', 'bookshop', 'config.json'), 'utf8'));
    assert.ok(validate(config), JSON.stringify(validate.errors));
    const stored = JSON.parse(
      await readFile(path.join(repoRoot, 'fixtures', 'bookshop', 'stored-configuration.json'), 'utf8'),
    ) as StoredFixture;
    assert.equal(stored.rows.length, 3);
    for (const row of stored.rows) {
      const merged = toPlain(mergeRowConfiguration(fromPlain(stored.configuration), fromPlain(row.configuration)));
      assert.ok(validate(merged), JSON.stringify(validate.errors));
    }
  });

  it('unknown keys stay valid (GE ignores them) while a wrong value is invalid', () => {
    const base = {
      api: { baseUrl: 'https://api.example.com/', paginaton: {} },
      config: { jobs: [{ endpoint: 'a', dataFeild: 'x' }], anyAttribute: 1 },
    };
    assert.ok(validate({ parameters: base }), JSON.stringify(validate.errors));
    assert.ok(
      !validate({
        parameters: { ...base, api: { baseUrl: 'https://api.example.com/', pagination: { method: 'pages' } } },
      }),
    );
    assert.equal(validate.errors?.[0].instancePath, '/parameters/api/pagination/method');
  });

  it('every property has a description, unknown keys carry a warning for editors, enums come from the registries', () => {
    const schema = JSON.parse(printed);
    const missing: string[] = [];
    let marked = 0;
    const walk = (node: Record<string, unknown>, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [key, child] of Object.entries(properties ?? {})) {
        if (typeof child.description !== 'string' || child.description === '') missing.push(`${at}.${key}`);
        walk(child, `${at}.${key}`);
      }
      if ((node.additionalProperties as { deprecationMessage?: string } | undefined)?.deprecationMessage) marked++;
      for (const branch of (node.anyOf as Array<Record<string, unknown>> | undefined) ?? []) walk(branch, at);
      if (node.items) walk(node.items as Record<string, unknown>, `${at}[]`);
    };
    walk(schema, '');
    walk(schema.definitions.parameters, 'parameters');
    walk(schema.definitions.job, 'job');
    assert.deepEqual(missing, []);
    assert.ok(marked > 10, `objects with closed keys are marked (${marked})`);
    assert.equal(
      schema.definitions.parameters.properties.config.additionalProperties,
      undefined,
      'config keys may be attributes',
    );
    assert.ok(
      schema.definitions.parameters.properties.api.properties.pagination.properties.method.enum.includes(
        'response.url',
      ),
    );
    assert.ok(
      schema.definitions.parameters.properties.api.properties.authentication.properties.type.enum.includes(
        'oauth20.login',
      ),
    );
  });
});
