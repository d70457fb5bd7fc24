import { ConfigError } from '../../common/errors.js';

// C0 controls except tab, and DEL: on the wire they would end the header line or split it (header
// injection), so they are refused instead of being sent raw.
const CONTROL = /[\u0001-\u0008\u000a-\u001f\u007f]/;

/**
 * A header value as GE sends it: the text up to the first NUL (GE hands values to curl as C strings,
 * so anything after a NUL never reaches the wire). Other control characters are a configuration
 * error naming `path`.
 */
export function headerText(value: string, path: string): string {
  const nul = value.indexOf('\u0000');
  const text = nul === -1 ? value : value.slice(0, nul);
  const control = CONTROL.exec(text);
  if (control) {
    const code = `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    throw new ConfigError(
      path,
      `the header value contains the control character ${code}`,
      'Header values cannot contain control characters other than tab; remove it',
    );
  }
  return text;
}

// RFC 9110 token characters: anything else cannot be a header name on the wire
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A header name from a configuration. GE crashes (exit 2) on an empty name and sends other
 * non-token names raw (an HTTP server answers 400); both are a configuration error naming `path`.
 */
export function headerName(name: string, path: string): string {
  if (name === '')
    throw new ConfigError(path, 'the header name is empty', 'Give the header a name such as "X-Api-Key"');
  if (!TOKEN.test(name)) {
    throw new ConfigError(
      path,
      `the header name ${JSON.stringify(name)} holds characters a header name cannot have`,
      "Use letters, digits and - _ . ! # $ % & ' * + ^ ` | ~ only",
    );
  }
  return name;
}
