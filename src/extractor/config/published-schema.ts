import { DEFAULT_FUNCTIONS } from '../functions/user-functions.js';
import { parametersSchema } from './schema.js';

/**
 * The JSON Schema gex publishes for editors (`gex schema`, committed as
 * schema/gex-config.schema.json): JSON Schema draft-07 — the draft editors support best — of a
 * Generic Extractor `config.json`, built from the validation schema (schema.ts), so the two never
 * disagree on what is valid. It adds a description to every property and marks unknown keys.
 *
 * Unknown keys: Generic Extractor ignores keys it does not know, so `additionalProperties: false`
 * would make configurations invalid that GE and gex run. Instead each object whose keys are a
 * closed set (the ones `gex run` warns about) gets an `additionalProperties` schema that accepts
 * anything but carries a `deprecationMessage`: VS Code's JSON support shows a warning on such a
 * key, and validators ignore it (an annotation). `#` keys (secrets) are never marked, nor the keys of
 * `parameters.config`, where any key may be an attribute a user function reads (`{"attr": …}`).
 */

export const PUBLISHED_SCHEMA_ID = 'https://gex.dev/schemas/gex-config.schema.json';

const UNKNOWN_KEY = {
  description:
    'Not a key Generic Extractor knows: it is ignored. Check the spelling (gex check names the nearest known key).',
  deprecationMessage: 'Unknown key: Generic Extractor ignores it (a typo?)',
};

/** Keys of these objects are the user's own (attributes read by `attr` functions): not marked. */
const OPEN_OBJECTS = new Set(['parameters.config']);

const FUNCTION_NOTE = `A value may be a user function object, e.g. {"function": "concat", "args": [...]}; functions: ${DEFAULT_FUNCTIONS.join(', ')}.`;

/** Descriptions of the properties whose validation schema has none (there, a description is also the "expected" hint of an error). */
const DESCRIPTIONS: Record<string, string> = {
  'parameters.api': 'The API: its base URL, pagination, HTTP options, retries and authentication.',
  'parameters.api.name': 'The API name; part of the default output bucket name (default "generic").',
  'parameters.api.pagination': 'How pages are requested: "method" and its options, plus stop conditions.',
  'parameters.api.pagination.limitParam': 'The request parameter that carries the page size (default "limit").',
  'parameters.api.pagination.pageParam':
    'pagenum: the request parameter that carries the page number (default "page").',
  'parameters.api.pagination.offsetParam': 'offset: the request parameter that carries the offset (default "offset").',
  'parameters.api.pagination.firstPage': 'pagenum: the number of the first page (default 1).',
  'parameters.api.pagination.firstPageParams':
    'Whether the first request carries the pagination parameters too (default true).',
  'parameters.api.pagination.offsetFromJob': "offset: start from the job's own offset parameter.",
  'parameters.api.pagination.includeParams': "response.url, response.param: keep the job's params on the next pages.",
  'parameters.api.pagination.paramIsQuery':
    "response.url: keep the job's endpoint and take the next URL's query as params.",
  'parameters.api.pagination.reverse': 'cursor: page backwards (the next cursor is the smallest id, not the largest).',
  'parameters.api.http': 'HTTP options of every request.',
  'parameters.api.http.headers': `Headers sent with every request: {"name": value}. ${FUNCTION_NOTE}`,
  'parameters.api.http.requiredHeaders': 'Header names parameters.config.http.headers must set.',
  'parameters.api.http.defaultOptions': 'Params and headers merged under every job request.',
  'parameters.api.http.defaultOptions.params': "Request parameters every job gets (a job's own win).",
  'parameters.api.http.defaultOptions.headers': "Headers every job gets (a job's own win).",
  'parameters.api.http.ignoreErrors': 'Status codes (≥ 400) whose responses are data instead of errors, e.g. [404].',
  'parameters.api.http.connectTimeout': 'Seconds to wait for a connection (default 30).',
  'parameters.api.http.requestTimeout': 'Seconds a request may take (default 300).',
  'parameters.api.retryConfig': 'When and how failed requests are retried.',
  'parameters.api.retryConfig.http': 'Retries on HTTP statuses.',
  'parameters.api.retryConfig.http.retryHeader': 'The header that says how long to wait (default "Retry-After").',
  'parameters.api.retryConfig.http.codes': 'Statuses that are retried (default [500, 502, 503, 504, 408, 420, 429]).',
  'parameters.api.retryConfig.curl': 'Retries on network errors.',
  'parameters.api.retryConfig.curl.codes': 'curl error numbers that are retried (default [28, 6, 7, 35, 52, 56]).',
  'parameters.api.authentication': 'How requests are authenticated: "type" and its options.',
  'parameters.api.authentication.loginRequest.headers': 'Headers of the login request.',
  'parameters.api.authentication.apiRequest.headers':
    'Headers every API request gets, e.g. {"Authorization": {"response": "token"}}.',
  'parameters.api.authentication.apiRequest.query':
    'Query parameters every API request gets, e.g. {"token": {"response": "token"}}.',
  'parameters.api.authentication.expires.response': 'The path of the expiry in the login response.',
  'parameters.api.authentication.expires.relative': 'The expiry is seconds from now rather than a timestamp.',
  'parameters.config': `The extraction: jobs, output bucket, mappings. Other keys are attributes that user functions read with {"attr": "name"}.`,
  'parameters.config.outputBucket':
    'The bucket of the output tables (default: ex-api-<api name>-<config id> when config.id is set).',
  'parameters.config.id': 'The configuration id; part of the default output bucket name.',
  'parameters.config.incrementalOutput': 'Load the output tables incrementally.',
  'parameters.config.compatLevel':
    'The Generic Extractor compatibility level (default 3; 1 and 2 select the legacy JSON parser).',
  'parameters.config.mappings': 'Explicit mappings of data types to tables and columns: {"dataType": {"column": …}}.',
  'parameters.config.http': 'HTTP options of this configuration.',
  'parameters.config.http.headers': `Headers sent with every request, over api.http.headers. ${FUNCTION_NOTE}`,
  'parameters.iterations':
    'Runs the configuration once per item, each item replacing keys of parameters.config, e.g. [{"accountId": 1}, {"accountId": 2}].',
  'parameters.aws': 'AWS options.',
  'parameters.aws.signature': 'AWS Signature Version 4 of every request.',
  'parameters.sshProxy': 'An SSH tunnel: refused by gex (reach the API directly).',
  'parameters.cache': "Generic Extractor's response cache for development runs: ignored by gex.",
  'job.dataField.path': 'The dotted path of the records in the response.',
  'job.dataField.delimiter': 'The separator of path (default ".").',
  'job.responseFilterDelimiter': 'The separator of responseFilter paths (default ".").',
  'job.children': 'Jobs run for each record of this job, with placeholders filled from it.',
  'job.placeholders':
    'Placeholders of a child endpoint: {"id": "path.in.parent.record"}, e.g. for "users/{id}/orders".',
  'job.recursionFilter': 'Runs the children only for parent records that match, e.g. "type==active".',
  'job.scroller': 'multiple pagination: the scroller (of api.pagination.scrollers) this job uses.',
  'job.headers': 'Headers of this job\'s requests: {"name": value}.',
};

/** Properties of the config.json document around `parameters`. */
const DOCUMENT_PROPERTIES = {
  // draft-07 ignores keywords beside $ref: the description goes beside an allOf
  parameters: { allOf: [{ $ref: '#/definitions/parameters' }], description: 'The Generic Extractor configuration.' },
  authorization: {
    type: ['object', 'array'],
    description: 'OAuth credentials (authorization.oauth_api.credentials), as Keboola passes them.',
  },
  image_parameters: {
    type: ['object', 'array'],
    description: 'Parameters of the component image, e.g. allowed_hosts; set by the platform, not the configuration.',
  },
  storage: {
    type: ['object', 'array'],
    description: 'Input and output mapping of the platform (not read by the extractor).',
  },
  action: { type: 'string', description: 'The component action: only "run" is supported.' },
};

type Node = Record<string, unknown> & {
  properties?: Record<string, Node>;
  anyOf?: Node[];
  items?: Node;
};

/** Builds the published schema; fails when a property has no description (a build or test then fails). */
export function publishedSchema(): Record<string, unknown> {
  const source = JSON.parse(JSON.stringify(parametersSchema)) as Node & { definitions: { job: Node }; $id?: string };
  const { definitions, $id: _id, ...parameters } = source;
  const missing: string[] = [];
  annotate(parameters, 'parameters', missing);
  annotate(definitions.job, 'job', missing);
  if (missing.length > 0)
    throw new Error(`Properties without a description in the published schema: ${missing.join(', ')}`);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: PUBLISHED_SCHEMA_ID,
    title: 'gex / Keboola Generic Extractor configuration (config.json)',
    description:
      'A Generic Extractor configuration as gex runs it. Valid here means gex does not refuse it on its shape; gex check also resolves functions and checks output names and allowed hosts.',
    type: 'object',
    required: ['parameters'],
    properties: DOCUMENT_PROPERTIES,
    definitions: {
      parameters: {
        ...parameters,
        description: "The Generic Extractor configuration (the component's configurationSchema).",
      },
      job: { ...definitions.job, description: 'A job: one resource of the API.' },
    },
  };
}

function annotate(node: Node, path: string, missing: string[]): void {
  if (node.properties) {
    for (const [key, child] of Object.entries(node.properties)) {
      const at = `${path}.${key}`;
      if (child.description === undefined) {
        if (DESCRIPTIONS[at] === undefined) missing.push(at);
        else child.description = DESCRIPTIONS[at];
      }
      annotate(child, at, missing);
    }
    if (!OPEN_OBJECTS.has(path) && node.additionalProperties === undefined) {
      node.patternProperties = { '^#': { description: 'An encrypted value (a secret).' } };
      node.additionalProperties = UNKNOWN_KEY;
    }
  }
  for (const branch of node.anyOf ?? []) annotate(branch, path, missing);
  if (node.items) annotate(node.items, `${path}[]`, missing);
}
