/**
 * Pre-signed addresses (S3's query authentication) carry their credential scope, signature and
 * session token in the query string: anyone holding the address holds the access it grants until
 * it expires. Log lines, errors and answers that show such an address show it with these masked.
 */

/** Query parameters of a pre-signed address that grant access (SigV4, and SigV2's older form). */
const SIGNING_PARAMETERS = [
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'Signature',
  'AWSAccessKeyId',
];

export const MASKED = '***';

/**
 * A signing parameter and its value, also percent-encoded once or twice (`%3FX-Amz-Signature%3D…`: an
 * address inside another's query or path). An encoded value runs to the next `&`, so what follows
 * it in the outer address may be masked with it: more hidden, never less.
 */
const PATTERN = new RegExp(
  `((?:[?&]|%(?:25)?(?:3F|26))(?:${SIGNING_PARAMETERS.join('|')})(?:=|%(?:25)?3D))[^&#\\s"'<>]*`,
  'gi',
);

/** `text` (a URL, a log line, an error message) with the signing parameters of any URL in it masked. */
export function maskUrlSignatures(text: string): string {
  return text.replace(PATTERN, `$1${MASKED}`);
}

const ANYWHERE = new RegExp(`(?:${SIGNING_PARAMETERS.join('|')})(?:=|%(?:25)?3D)`, 'i');

/** Whether `text` names a signing parameter with a value anywhere (in a path, a parameter's name…), raw or percent-encoded. */
export function holdsUrlSignature(text: string): boolean {
  return ANYWHERE.test(text);
}

/** Whether `url` is an address pre-signed with SigV4 (S3's query authentication). */
export function isPresignedUrl(url: string): boolean {
  try {
    const { searchParams } = new URL(url);
    return searchParams.has('X-Amz-Signature') && searchParams.has('X-Amz-Credential');
  } catch {
    return false;
  }
}
