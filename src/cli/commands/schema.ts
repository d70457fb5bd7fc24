import type { Argv } from 'yargs';
import { publishedSchema } from '../../extractor/config/published-schema.js';

/** The published schema as `gex schema` prints it (and schema/gex-config.schema.json holds it). */
export function publishedSchemaText(): string {
  return `${JSON.stringify(publishedSchema(), null, 2)}\n`;
}

/** `gex schema`: the JSON Schema (draft-07) of a Generic Extractor config.json, for editors. */
export function schemaCommand(yargs: Argv): Argv {
  return yargs.command(
    'schema',
    'Print the JSON Schema (draft-07) of a Generic Extractor configuration (config.json), for editors',
    (y) => y,
    () => {
      process.stdout.write(publishedSchemaText());
    },
  );
}
