/**
 * JSON Schema of the `parameters` Generic Extractor accepts. It is deliberately as lenient as GE
 * where GE is lenient (numeric strings, PHP truthiness, unknown keys are ignored) and strict where
 * GE fails at run time, so that a mistake is reported before any request is sent. It is also the
 * one list of the keys gex knows: every key gex or GE reads is a property here (unknown-keys.ts
 * warns about the others). The same schema
 * is published as the `ex-generic-v2` component's `configurationSchema`.
 */

import { AUTH_TYPES } from '../auth/factory.js';
import { PAGINATION_METHOD_NAMES } from '../pagination/factory.js';

const integerLike = {
  anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\s*-?\\d+\\s*$' }],
};
const phpBoolean = { type: ['boolean', 'integer', 'string', 'null'] };
const valueOrFunction = { type: ['string', 'number', 'boolean', 'object', 'null'] };

const jobSchema = {
  type: 'object',
  required: ['endpoint'],
  properties: {
    endpoint: {
      type: 'string',
      minLength: 1,
      description: 'a path relative to api.baseUrl (e.g. "users") or an absolute URL',
    },
    params: {
      anyOf: [{ type: ['object', 'array', 'null'] }, { enum: ['', '0', 0, false] }],
      description: 'an object of request parameters, e.g. {"type": "active"}',
    },
    method: {
      type: 'string',
      pattern: '^([Gg][Ee][Tt]|[Pp][Oo][Ss][Tt]|[Ff][Oo][Rr][Mm])$',
      description: 'one of GET, POST (JSON body) or FORM (form-encoded body)',
    },
    dataType: { type: 'string', description: 'the output table name' },
    dataField: {
      anyOf: [
        { type: 'string' },
        {
          type: 'object',
          required: ['path'],
          properties: { path: { type: 'string', minLength: 1 }, delimiter: { type: 'string', minLength: 1 } },
        },
      ],
      description: 'a dotted path to the array of records in the response, or {"path": "...", "delimiter": "|"}',
    },
    responseFilter: {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      description: 'a path (or list of paths) of properties to keep as JSON text',
    },
    responseFilterDelimiter: { type: 'string', minLength: 1 },
    children: { type: 'array', items: { $ref: '#/definitions/job' } },
    // a PHP-empty value means "no placeholders" (the child is then skipped with a warning, as in GE)
    placeholders: { anyOf: [{ type: 'object' }, { enum: [null, false, 0, '', '0', []] }] },
    recursionFilter: { type: 'string' },
    concurrency: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      description:
        "gex's addition: how many runs of this child job (one per parent record) are fetched ahead at once; children inherit it (1 = one by one, as Generic Extractor)",
    },
    scroller: { type: 'string' },
    headers: { type: 'object' },
    id: { description: 'accepted for Generic Extractor compatibility' },
    userData: { description: 'values added as columns to every record of the job' },
  },
};

/** A stop condition that is off: GE ignores PHP-empty values. */
const stopConditionOff = { enum: [null, false, 0, '', '0', [], {}] };

const paginationSchema = {
  type: 'object',
  properties: {
    method: {
      enum: PAGINATION_METHOD_NAMES,
      description: `one of ${PAGINATION_METHOD_NAMES.join(', ')}`,
    },
    limit: {
      anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^\\s*\\d*\\s*$' }, { type: 'null' }],
      description: 'the page size: a non-negative integer',
    },
    limitParam: { type: 'string', minLength: 1 },
    pageParam: { type: 'string', minLength: 1 },
    offsetParam: { type: 'string', minLength: 1 },
    firstPage: integerLike,
    firstPageParams: phpBoolean,
    offsetFromJob: phpBoolean,
    concurrency: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      description: 'pages requested in parallel (1 = sequential, as Generic Extractor)',
    },
    // pagenum, offset (gex's additions; Generic Extractor ignores them)
    totalPath: {
      type: ['string', 'null'],
      description:
        'pagenum, offset: the path of the number of records in the first response, e.g. "meta.total"; the job ends after the last page by it',
    },
    totalPagesPath: {
      type: ['string', 'null'],
      description:
        'pagenum, offset: the path of the number of pages in the first response, e.g. "meta.pages"; the job ends after the last page by it',
    },
    // response.url, zendesk.response.url
    urlKey: { type: 'string', description: 'the path of the next page URL in the response (default next_page)' },
    delimiter: { type: 'string', minLength: 1, description: 'the separator of urlKey (default ".")' },
    includeParams: phpBoolean,
    paramIsQuery: phpBoolean,
    // response.param
    responseParam: { type: 'string', description: 'the path of the next page value in the response' },
    queryParam: { type: 'string', description: 'the request parameter that carries it' },
    scrollRequest: {
      type: ['object', 'array'],
      description: 'a job-like object for the next pages: {"endpoint", "method", "params"}',
    },
    // cursor
    idKey: { type: 'string', description: 'the path of the id inside each record' },
    param: { type: 'string', description: 'the request parameter that carries the cursor' },
    reverse: phpBoolean,
    increment: { type: ['integer', 'null'], description: 'a whole number added to the cursor, e.g. 1 or -1' },
    // multiple
    scrollers: { type: ['object', 'array'], description: 'named pagination configs: {"name": {"method": ...}}' },
    default: { type: ['string', 'null'], description: 'the scroller of jobs without "scroller"' },
    // stop conditions (GE ignores a PHP-empty one)
    nextPageFlag: {
      anyOf: [
        stopConditionOff,
        {
          type: 'object',
          required: ['field', 'stopOn'],
          properties: {
            field: {
              type: 'string',
              minLength: 1,
              description: 'a top-level property of the response, e.g. "hasMore"',
            },
            stopOn: {
              type: 'boolean',
              description: 'true or false (without quotes): the value of field on the last page',
            },
            ifNotSet: {
              type: 'boolean',
              description: 'true or false (without quotes): the value assumed when field is missing',
            },
          },
        },
      ],
      description: 'an object like {"field": "hasMore", "stopOn": false}',
    },
    forceStop: {
      anyOf: [
        stopConditionOff,
        {
          type: 'object',
          properties: {
            pages: { type: ['integer', 'null'], description: 'the most requests per job: a number without quotes' },
            time: { type: ['integer', 'string', 'null'], description: 'seconds, or a time span such as "1 hour"' },
            volume: { description: 'bytes of responses after which paging stops' },
          },
        },
      ],
      description: 'an object like {"pages": 100, "time": "1 hour", "volume": 1000000}',
    },
    limitStop: {
      anyOf: [
        stopConditionOff,
        {
          type: 'object',
          properties: {
            field: { type: 'string', description: 'the path of the total in the response' },
            count: { description: 'the number of records after which paging stops' },
          },
        },
      ],
      description: 'an object with "count" (records) or "field" (the path of the total in the response)',
    },
  },
};

export const parametersSchema = {
  $id: 'https://gex.dev/schemas/ex-generic-v2/parameters.json',
  type: 'object',
  required: ['api', 'config'],
  definitions: { job: jobSchema },
  properties: {
    api: {
      type: 'object',
      required: ['baseUrl'],
      properties: {
        baseUrl: {
          anyOf: [{ type: 'string', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]+' }, { type: 'object' }],
          description: 'an absolute http(s) URL such as "https://api.example.com/v1/" (or a user function)',
        },
        name: { type: 'string' },
        caCertificate: { description: 'a PEM CA certificate (or bundle) trusted for the API' },
        query: { description: 'legacy: query parameters of "query" authentication' },
        pagination: paginationSchema,
        http: {
          type: 'object',
          properties: {
            headers: { type: 'object', additionalProperties: valueOrFunction },
            requiredHeaders: { type: 'array', items: { type: 'string' } },
            defaultOptions: {
              type: 'object',
              properties: { params: { type: ['object', 'array'] }, headers: { type: ['object', 'array'] } },
            },
            ignoreErrors: { type: 'array', items: { type: 'integer' } },
            connectTimeout: { type: ['number', 'string', 'null'] },
            requestTimeout: { type: ['number', 'string', 'null'] },
            maxRequestsPerSecond: {
              type: 'number',
              exclusiveMinimum: 0,
              description:
                'a positive number of requests per second, such as 5 or 0.5 (without quotes): the most gex sends, over all jobs, child jobs and parallel pages',
            },
          },
        },
        retryConfig: {
          type: 'object',
          properties: {
            maxRetries: { ...integerLike, description: 'how many times a failed request is retried' },
            maxRetryWait: {
              type: 'number',
              minimum: 0,
              description: 'seconds: the longest wait a Retry-After header may impose',
            },
            backoffBase: {
              type: 'number',
              exclusiveMinimum: 0,
              description: 'seconds before the first retry (doubles each time)',
            },
            http: {
              type: 'object',
              properties: { retryHeader: { type: 'string' }, codes: { type: 'array', items: { type: 'integer' } } },
            },
            curl: { type: 'object', properties: { codes: { type: 'array', items: { type: 'integer' } } } },
            headerName: { description: 'legacy name of http.retryHeader' },
            httpCodes: { description: 'legacy name of http.codes' },
            curlCodes: { description: 'legacy name of curl.codes' },
          },
        },
        authentication: {
          type: 'object',
          properties: {
            type: {
              enum: [...AUTH_TYPES, '', null],
              description: `one of ${AUTH_TYPES.filter((t) => t !== 'url.query').join(', ')}`,
            },
            query: {
              type: ['object', 'array'],
              description: 'query parameters added to every request: {"name": value-or-function}',
            },
            headers: {
              type: ['object', 'array'],
              description: 'oauth20: headers added to every request: {"name": value-or-function}',
            },
            format: { enum: ['json', 'text', '', null], description: 'json or text' },
            loginRequest: {
              type: 'object',
              properties: {
                endpoint: { type: 'string', description: 'the login endpoint (relative to api.baseUrl, or absolute)' },
                method: jobSchema.properties.method,
                params: jobSchema.properties.params,
                headers: { type: ['object', 'array'] },
              },
              description:
                'the login request: {"endpoint": "login", "method": "GET|POST|FORM", "params": {...}, "headers": {...}}',
            },
            apiRequest: {
              type: 'object',
              properties: { headers: { type: ['object', 'array'] }, query: { type: ['object', 'array'] } },
              description: 'what every API request gets from the login response: {"headers": {...}, "query": {...}}',
            },
            expires: {
              anyOf: [
                integerLike,
                { enum: ['', null, false] },
                {
                  type: 'object',
                  required: ['response'],
                  properties: { response: { type: 'string', minLength: 1 }, relative: phpBoolean },
                },
              ],
              description:
                'seconds the login is valid (-1 = log in before every request), or {"response": "path.to.expiry", "relative": false}',
            },
          },
        },
      },
    },
    config: {
      type: 'object',
      required: ['jobs'],
      properties: {
        jobs: {
          type: 'array',
          minItems: 1,
          items: { $ref: '#/definitions/job' },
          description: 'a non-empty list of jobs, e.g. [{"endpoint": "users"}]',
        },
        outputBucket: { type: 'string' },
        id: { type: ['string', 'integer'] },
        incrementalOutput: { type: 'boolean' },
        compatLevel: integerLike,
        mappings: { type: ['object', 'array'] },
        incremental: { description: 'the incremental flag of tables without one in mappings' },
        userData: { description: 'values added as columns to every record' },
        username: { description: 'basic authentication: the user name' },
        password: { description: 'basic authentication: the password (prefer "#password")' },
        debug: { description: 'accepted for Generic Extractor compatibility' },
        http: { type: 'object', properties: { headers: { type: 'object', additionalProperties: valueOrFunction } } },
      },
    },
    iterations: { type: 'array', items: { type: 'object' } },
    // AWS Signature Version 4 of every request; the values are checked when the run starts (as GE)
    aws: {
      properties: {
        signature: {
          properties: {
            credentials: {
              description: 'signs every request with AWS Signature Version 4; all four keys are required',
              properties: {
                accessKeyId: { description: 'the AWS access key id' },
                '#secretKey': { description: 'the AWS secret access key (encrypted)' },
                serviceName: { description: 'the signing service name, e.g. "execute-api"' },
                regionName: { description: 'the signing region, e.g. "eu-central-1"' },
              },
            },
          },
        },
      },
    },
    // known to Generic Extractor; refused (sshProxy) or ignored (cache) by gex
    sshProxy: {},
    cache: {},
  },
} as const;
