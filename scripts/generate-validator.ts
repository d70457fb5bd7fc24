/**
 * Build step: writes the ajv standalone validator of the ex-generic-v2 parameters schema next to
 * validate.js (dist/src/extractor/config/), so runs do not import ajv or compile the schema.
 */
import { writeFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { parametersSchema } from '../src/extractor/config/schema.js';
import { AJV_OPTIONS, GENERATED_VALIDATOR } from '../src/extractor/config/validator-options.js';

const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true } });
// CommonJS default export: under NodeNext the import is the module object
const generate = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as (
  ajv: Ajv,
  validate: unknown,
) => string;
// ajv's ESM output still require()s two runtime helpers: give the module a require
const code = `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${generate(ajv, ajv.compile(parametersSchema))}`;
const target = new URL(`../src/extractor/config/${GENERATED_VALIDATOR.slice(2)}`, import.meta.url);
await writeFile(target, code);
