import { isUtf8 } from 'node:buffer';
import qs from 'qs';

/**
 * Bounds of a form body's shape. Keboola's PHP stack accepts at most 1,000 input variables
 * (`max_input_vars`); gex refuses more instead of dropping them, and bounds the nesting and the
 * array indexes that make the parser's work grow faster than the body.
 */
export const FORM_LIMITS = {
  /** `name=value` pairs */
  parameters: 1000,
  /** bracket levels below a top-level name (`metadata[0][key]` is 2) */
  depth: 5,
  /** elements of one list and the largest index (`a[1000]`) */
  arrayLength: 1000,
} as const;

/** A form body that breaks one of FORM_LIMITS; `message` says which. */
export class FormLimitExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormLimitExceeded';
  }
}

/** A body whose bytes are not UTF-8: decoding it leniently would store U+FFFD in place of them. */
export class InvalidUtf8 extends Error {
  constructor() {
    super('The request body is not valid UTF-8. Send the body encoded as UTF-8.');
    this.name = 'InvalidUtf8';
  }
}

/** The bytes as text; throws InvalidUtf8 (checked first: decoding replaces bad bytes silently). */
export function strictUtf8(bytes: Uint8Array): string {
  if (!isUtf8(bytes)) throw new InvalidUtf8();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** A form body's bytes → parsed (see parseFormText); undefined when empty. */
export function parseFormBytes(bytes: Uint8Array): unknown {
  const text = strictUtf8(bytes);
  return text.trim() === '' ? undefined : parseFormText(text);
}

/**
 * PHP bracket keys (`rowsSortOrder[0]=a`, `metadata[0][key]=k`) → plain objects, arrays and
 * strings. qs throws, rather than truncating, when a limit is exceeded: the client learns of it.
 */
export function parseFormText(text: string): unknown {
  try {
    return qs.parse(text, {
      parameterLimit: FORM_LIMITS.parameters,
      depth: FORM_LIMITS.depth,
      strictDepth: true,
      arrayLimit: FORM_LIMITS.arrayLength,
      throwOnLimitExceeded: true,
    });
  } catch (e) {
    if (e instanceof RangeError) throw new FormLimitExceeded(limitMessage(e.message));
    throw e;
  }
}

/** qs's message → one naming gex's limit and what to do. */
function limitMessage(qsMessage: string): string {
  if (/parameter limit/i.test(qsMessage)) {
    return `The form body has more than ${FORM_LIMITS.parameters} fields (the limit of Keboola's Storage API). Send fewer fields, or send the body as JSON.`;
  }
  if (/array limit/i.test(qsMessage)) {
    return `A list in the form body has more than ${FORM_LIMITS.arrayLength} elements or an index above ${FORM_LIMITS.arrayLength}. Send the body as JSON.`;
  }
  if (/depth/i.test(qsMessage)) {
    return `A form field name is nested more than ${FORM_LIMITS.depth} brackets deep (such as a[b][c][d][e][f][g]). Send the body as JSON.`;
  }
  return `The form body exceeds a limit of the parser (${qsMessage}).`;
}
