import type { Difference } from './compare.js';
import type { SideResult } from './run-case.js';

/**
 * Differences gex has on purpose. Each names the entry of "Deliberate differences from Generic
 * Extractor" (docs/ge-behaviour.md) it stands for; a case whose every difference one of them
 * explains counts as a deviation, not a failure.
 */
export interface Deviation {
  id: string;
  readme: string;
  explains(reference: SideResult, gex: SideResult, differences: Difference[]): boolean;
}

const gexRefusedBeforeSending = (gex: SideResult) => gex.code === 1 && gex.requests.length === 0;

export const DEVIATIONS: Deviation[] = [
  {
    id: 'object-as-string-crashes-ge',
    readme:
      'GE crashes (exit 2) where a recursionFilter or a placeholder meets an object value (PHP cannot make it a string); gex compares it as unequal or reports the missing value',
    explains: (reference) =>
      reference.code === 2 && /Object of class stdClass could not be converted to string/.test(reference.log),
  },
  {
    id: 'integer-mapped-table-crashes-ge',
    readme:
      'a mapped dataType or table named by an integer ("0") crashes GE (exit 2) when it writes its header-only table; gex writes the table',
    explains: (reference, gex) =>
      reference.code === 2 &&
      gex.code === 0 &&
      /MissingTableHelper::fillMissingTableMapping\(\) must be of the type string, int given/.test(reference.log),
  },
  {
    id: 'integer-placeholder-name-crashes-ge',
    readme:
      'GE crashes (exit 2) where gex carries on or fails with a message: a child placeholder named by an integer ("0") fails with a message (exit 1)',
    explains: (reference, gex) =>
      reference.code === 2 &&
      gex.code === 1 &&
      /getPlaceholder\(\) must be of the type string, int given/.test(reference.log) &&
      /The placeholder name '-?\d+' is an integer/.test(gex.log),
  },
  {
    id: 'placeholder-function-on-list-crashes-ge',
    readme:
      "GE crashes (exit 2) where gex carries on or fails with a message: a placeholder function meeting a list value fails with GE's message (exit 1)",
    explains: (reference, gex) =>
      reference.code === 2 &&
      gex.code === 1 &&
      [reference.log, gex.log].every((log) =>
        log.includes("Error evaluating user function - placeholder 'value' not found!"),
      ),
  },
  {
    id: 'infinite-number-in-row-crashes-ge',
    readme:
      'GE crashes (exit 2) where gex carries on: a record holding a number beyond the float range (`1e400`) anywhere and a `null` or missing value in a column of its table is written',
    explains: (reference, gex) =>
      reference.code === 2 &&
      gex.code === 0 &&
      /json_decode\(\) expects parameter 1 to be string, bool given/.test(reference.log),
  },
  {
    id: 'userdata-key-crashes-ge',
    readme:
      "userData keys GE's JSON parser crashes on (exit 2) — integer-like keys, nodeType, [] — are refused with a message (exit 1)",
    // GE crashes on it only when it writes the tables at the end, so an earlier failure may come first
    explains: (reference, gex) =>
      reference.code !== 0 &&
      gex.code === 1 &&
      /The userData key .* Generic Extractor's JSON parser fails on it/.test(gex.log),
  },
  {
    id: 'ignored-error-body-not-an-object',
    readme:
      'An ignored error response (ignoreErrors) whose JSON body is not an object is data like any other; GE crashes (exit 2)',
    explains: (reference) =>
      reference.code === 2 &&
      /RestClient::handleException\(\) must be an instance of stdClass or null/.test(reference.log),
  },
  {
    id: 'empty-table-name-refused',
    readme: 'output names that are empty ... are refused (GE writes outside out/tables or nothing)',
    explains: (_reference, gex) => gexRefusedBeforeSending(gex) && /becomes the table name ""/.test(gex.log),
  },
  {
    id: 'unsafe-output-name-refused',
    readme:
      'output names that are empty, `.`/`..`, contain `/`, `\\` or NUL, or exceed 255 bytes are refused (GE writes outside out/tables or nothing)',
    explains: (_reference, gex) =>
      gexRefusedBeforeSending(gex) &&
      /Invalid configuration at parameters\.config\.[^:]*: the table name .* (is empty|contains a NUL byte|contains a path separator|is "\.\.?"|is \d+ bytes long)/.test(
        gex.log,
      ),
  },
  {
    id: 'header-name-refused',
    readme:
      'a header name that is empty or not an HTTP token (e.g. with a space) is a configuration error; GE sends it raw',
    explains: (_reference, gex) =>
      gexRefusedBeforeSending(gex) &&
      /the header name .* holds characters a header name cannot have|the header name is empty/.test(gex.log),
  },
  {
    id: 'header-control-character-refused',
    readme:
      'A header value holding a control character other than tab (CR, LF, DEL…) is refused before any request; GE sends it raw',
    explains: (_reference, gex) =>
      gexRefusedBeforeSending(gex) && /the header value contains the control character/.test(gex.log),
  },
  {
    id: 'config-error-instead-of-crash',
    readme:
      'Values GE crashes on with PHP type errors (exit 2) are configuration errors here (exit 1) with the JSON path',
    explains: (reference, gex) =>
      reference.code === 2 && gexRefusedBeforeSending(gex) && /configuration|config\.json|parameters\./i.test(gex.log),
  },
  {
    id: 'state-file-not-an-object',
    readme:
      'Values GE crashes on with PHP type errors (exit 2) are configuration errors here (exit 1): a state file that is not a JSON object',
    explains: (reference, gex) =>
      reference.code === 2 && gexRefusedBeforeSending(gex) && /state file .* must hold a JSON object/.test(gex.log),
  },
  {
    id: 'invalid-configuration-refused',
    readme: 'Invalid configurations GE would silently run with are refused with a message',
    // a pagination value (the page size) GE reads as 0 where gex refuses it: checked per job, so the
    // refusal may come after earlier jobs' requests
    explains: (_reference, gex) =>
      gex.code === 1 &&
      /Invalid configuration at parameters\.api\.pagination[^:]*: must be a non-negative integer/.test(gex.log),
  },
  {
    id: 'configuration-checked-before-requests',
    readme:
      'A configuration is checked before the first request: where GE fails (exit 1) only when it reaches the bad part, gex fails (exit 1) before sending anything',
    explains: (reference, gex) =>
      reference.code === 1 && gexRefusedBeforeSending(gex) && /Invalid configuration at/.test(gex.log),
  },
];

export function explainingDeviation(
  reference: SideResult,
  gex: SideResult,
  differences: Difference[],
): Deviation | undefined {
  if (differences.length === 0) return undefined;
  return DEVIATIONS.find((d) => d.explains(reference, gex, differences));
}
