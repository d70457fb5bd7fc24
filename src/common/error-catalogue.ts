/**
 * Every error gex reports, by a stable code (the model is fastify's errors.js: one table of code,
 * kind and message). The code is what machines match on — in the run summary (`error.code`), a log
 * line's `code` field and `gex serve`'s error body (`gexCode`) — while messages may be reworded.
 *
 * `type` follows Keboola: a `user` error is the input's fault (a configuration, an API's answer,
 * a command's arguments; exit 1, retrying will not help), an `application` error is gex's or its
 * environment's (exit 2). `status` is the HTTP status `gex serve` answers the error with, where the
 * server can answer it. `message` is the shape of the message: `{…}` stands for what varies.
 *
 * docs/errors.md is this table in words; a test keeps the two equal.
 */

export type ErrorType = 'user' | 'application';

export interface ErrorEntry {
  readonly type: ErrorType;
  readonly status?: number;
  readonly message: string;
}

export const ERROR_CATALOGUE = {
  // the command line
  GEX_CLI_USAGE: { type: 'user', message: '{option} {what it takes or excludes}, got {value}' },
  GEX_INPUT_INVALID: {
    type: 'user',
    message: '{file or standard input} {is missing, too large, not UTF-8 or not valid JSON}',
  },
  GEX_FILE_NOT_WRITTEN: { type: 'user', message: 'Cannot write {file}: {reason} / {file} exists already: …' },
  GEX_SETTING_INVALID: { type: 'user', message: '{environment variable or setting} must be {what}, got "{value}"' },
  GEX_SERVER_LISTEN_FAILED: { type: 'user', message: 'Port {port} on {host} is already in use: …' },

  // the data folder and the run
  GEX_DATA_FOLDER_INVALID: { type: 'user', message: 'No configuration file at {file} / {file} is not valid JSON: …' },
  GEX_DATA_FOLDER_UNSAFE: { type: 'user', message: 'Refusing to use {path}: it is a symbolic link …' },
  GEX_DATA_FOLDER_NOT_WRITABLE: { type: 'user', message: 'Cannot write in the folder {folder} ({reason})' },
  GEX_RUN_LOCKED: { type: 'user', message: 'Another gex run is using {what}: {pid, host, start}' },
  GEX_CONFIG_NOT_FOUND: {
    type: 'user',
    message: 'Configuration {id} of component {component} not found in {store}: …',
  },
  GEX_ROW_NOT_FOUND: { type: 'user', message: 'Row {id} not found in configuration {id}. Existing rows: …' },
  GEX_JOB_NOT_FOUND: { type: 'user', message: 'Job {id} not found' },
  GEX_CONFIG_DISABLED: {
    type: 'user',
    message: 'Configuration {id} is disabled. Enable it in the store, or run it anyway with --force.',
  },
  GEX_CONFIG_INVALID: { type: 'user', message: 'Invalid configuration at {path}: {problem}. {fix}' },
  GEX_CONFIG_REFUSED: {
    type: 'user',
    message: 'Not stored: a run would refuse it. {problems} Fix it, or store it anyway with --force …',
  },
  GEX_ACTION_UNSUPPORTED: {
    type: 'user',
    message: 'Action \'{action}\' is not supported: gex runs extractions only (action "run").',
  },
  GEX_STATE_INVALID: { type: 'user', message: 'Invalid parser structure in state at {path}: …' },
  GEX_SECRET_NOT_DECRYPTED: {
    type: 'user',
    message: 'Cannot decrypt {key} of {row or configuration}: {reason}. {fix}',
  },
  GEX_MASTER_KEY_INVALID: {
    type: 'user',
    message:
      'No master key: … / The master key from {source} is not the key of this store … / {variable} is set, but against the Storage API at {url} gex uses no master key of its own …',
  },

  // the API being extracted
  GEX_API_REQUEST_FAILED: {
    type: 'user',
    message: 'The API request failed: [{status}] {reason} ({method} {url}) {body}',
  },
  GEX_API_UNREACHABLE: {
    type: 'user',
    message:
      '{method} {url} failed: {network error} (after {n} retries) / Cannot connect to {host}:{port} (…): … The host has not answered once in this run …',
  },
  GEX_API_RETRY_WAIT_TOO_LONG: {
    type: 'user',
    message: 'The API asked to wait {n} s ({header}: {value}) before retrying {url}, …',
  },
  GEX_API_RESPONSE_INVALID: {
    type: 'user',
    message: 'Invalid JSON response from API: {reason} ({method} {url}, status {status})',
  },
  GEX_API_RESPONSE_TOO_LARGE: { type: 'user', message: 'The response to {method} {url} is larger than {limit} …' },
  GEX_API_REDIRECT_REFUSED: { type: 'user', message: '{url} redirected to {url}: {reason}. …' },
  GEX_API_HOST_NOT_ALLOWED: {
    type: 'user',
    message: 'URL "{url}" is not in the allowed hosts whitelist (image_parameters.allowed_hosts).',
  },
  GEX_API_REQUEST_UNENCODABLE: { type: 'user', message: 'The POST body cannot be encoded as JSON: {path} …' },
  GEX_API_LOGIN_FAILED: {
    type: 'user',
    message: 'The login request failed: [{status}] {reason} ({method} {url}) {body}',
  },
  GEX_USER_FUNCTION_FAILED: { type: 'user', message: 'User script error: {reason}' },
  GEX_RESPONSE_NOT_TABULAR: {
    type: 'user',
    message: 'Error parsing response JSON: {reason} / Cannot write the table {name}: {problem}',
  },

  // Storage tables
  GEX_INPUT_MAPPING_INVALID: { type: 'user', message: '{row}: storage.input.tables[{i}] {problem}.' },
  GEX_OUTPUT_MAPPING_INVALID: {
    type: 'user',
    message: '{row}: storage.output.tables[{i}] {problem}. / {row}: Table sources not found: "{source}". …',
  },
  GEX_TABLE_LOAD_REFUSED: {
    type: 'user',
    message: '{file}: {what in the file, its manifest or the table breaks the load}.',
  },
  GEX_TABLE_REQUEST_INVALID: { type: 'user', status: 400, message: '{table id, column, filter or limit} {problem}.' },
  GEX_TABLE_NOT_FOUND: { type: 'user', status: 404, message: 'Table {id} does not exist in this project.' },
  GEX_BUCKET_NOT_FOUND: { type: 'user', status: 404, message: 'Bucket {id} does not exist in this project.' },
  GEX_BUCKET_EXISTS: { type: 'user', status: 400, message: 'Bucket {id} already exists in this project; …' },
  GEX_BUCKET_NOT_EMPTY: { type: 'user', status: 400, message: 'Bucket {id} has {n} tables …' },
  GEX_COLUMN_NOT_FOUND: { type: 'user', status: 404, message: 'Column {name} not found in table {id} …' },
  GEX_METADATA_INVALID: {
    type: 'user',
    status: 400,
    message: '{where}: Invalid Metadata Key ({field}) / Invalid metadata provider … / {field} {problem}',
  },
  GEX_METADATA_NOT_FOUND: { type: 'user', status: 404, message: 'The supplied metadata ID was not found: …' },
  GEX_FILE_NOT_FOUND: { type: 'user', status: 404, message: 'File {id} not found in this project …' },
  GEX_FILE_TOO_LARGE: {
    type: 'user',
    status: 413,
    message: "The file is larger than this server's limit of {n} bytes …",
  },

  // the store (a SQLite file, PostgreSQL or a Storage API) and gex serve's answers
  GEX_STORE_MISSING: { type: 'user', message: 'No store at {location}: …' },
  GEX_STORE_UNUSABLE: {
    type: 'user',
    message: 'The store {file} is not a SQLite database: … / Cannot create the store {file}: …',
  },
  GEX_STORE_INVALID_REQUEST: {
    type: 'user',
    status: 400,
    message: '{what the store or the server refused in the request}',
  },
  GEX_STORE_TOKEN_INVALID: {
    type: 'user',
    status: 401,
    message:
      'Invalid access token / The Storage API at {url} refused the token from {--token or KBC_TOKEN}: … / … needs a token',
  },
  GEX_STORE_ACCESS_DENIED: { type: 'user', status: 403, message: "You don't have access to the resource." },
  GEX_STORE_NOT_FOUND: {
    type: 'user',
    status: 404,
    message: 'Configuration {id} not found / Row {id} not found / Unknown route: …',
  },
  GEX_STORE_NOT_IMPLEMENTED: {
    type: 'user',
    status: 501,
    message: 'Not implemented in gex: {feature} ({method} {path}). …',
  },
  GEX_STORE_UNAVAILABLE: {
    type: 'user',
    status: 503,
    message: 'Storage database unavailable ({location}): {reason} …',
  },
  GEX_SERVER_BUSY: {
    type: 'user',
    status: 503,
    message: 'The server is already holding {n} MiB of {uploads or data previews} for other requests. Retry …',
  },
  GEX_STORAGE_API_REFUSED: { type: 'user', message: 'The Storage API at {url} refused {what}: {reason}' },
  GEX_STORAGE_API_UNREACHABLE: { type: 'user', message: 'The Storage API at {url} cannot be reached: {reason} …' },
  GEX_OBJECT_STORE_UNREACHABLE: {
    type: 'user',
    status: 503,
    message: 'The object store at {endpoint} cannot be reached while {what} s3://{bucket}: {reason} …',
  },
  GEX_OBJECT_STORE_REFUSED: {
    type: 'user',
    status: 503,
    message:
      'The object store at {endpoint} refused {what} s3://{bucket}: {wrong key, access denied, no such bucket} …',
  },

  // gex's own faults and its environment's
  GEX_INTERNAL: {
    type: 'application',
    status: 500,
    message: 'Application error: {message} (a bug or an environment fault)',
  },
  GEX_STORAGE_API_FAILED: { type: 'application', message: 'Storage API {method} {url} failed: [{status}] {reason} …' },
  GEX_TABLE_WRITE_FAILED: {
    type: 'application',
    message: 'Cannot write {file}: {reason} / Error assigning {value} to a non-existing column …',
  },
  GEX_TABLE_FILES_MISSING: {
    type: 'application',
    message: 'The run finished but these output files are missing from {folder}: …',
  },
  GEX_STATE_SAVE_FAILED: {
    type: 'application',
    message: 'Saving the state of {row} failed: {reason}; {what was put back}',
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

type CodeOfType<T extends ErrorType> = {
  [C in ErrorCode]: (typeof ERROR_CATALOGUE)[C]['type'] extends T ? C : never;
}[ErrorCode];

export type UserErrorCode = CodeOfType<'user'>;
export type ApplicationErrorCode = CodeOfType<'application'>;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOGUE, value);
}

export function isUserErrorCode(value: unknown): value is UserErrorCode {
  return isErrorCode(value) && ERROR_CATALOGUE[value].type === 'user';
}
