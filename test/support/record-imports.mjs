// `node --import <this file>`: appends the URL of every ES module the process resolves to the file
// named by $GEX_RECORD_IMPORTS (the hooks run on a loader thread, so they write to a file).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      appendFileSync(${JSON.stringify(process.env.GEX_RECORD_IMPORTS)}, result.url + '\\n');
      return result;
    }
  `)}`,
);
