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

const PATTERN = new RegExp(`([?&](?:${SIGNING_PARAMETERS.join('|')})=)[^&#\\s"'<>]*`, 'gi');

/** `text` (a URL, a log line, an error message) with the signing parameters of any URL in it masked. */
export function maskUrlSignatures(text: string): string {
  return text.replace(PATTERN, `$1${MASKED}`);
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
