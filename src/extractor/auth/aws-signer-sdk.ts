import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * AWS's own SigV4 signer, configured as GE's signing middleware signs. A module of its own so that
 * it is imported on first use (dynamically): the bundle keeps the SDK's ~400 KB out of every other
 * run, and a static import here lets the bundler link its CommonJS exports by name.
 */
export function createSignatureV4(credentials: {
  accessKeyId: string;
  secretKey: string;
  serviceName: string;
  regionName: string;
}): SignatureV4 {
  return new SignatureV4({
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretKey },
    region: credentials.regionName,
    service: credentials.serviceName,
    sha256: Hash.bind(null, 'sha256'),
    // the path is given already escaped (once per byte, `/` kept, not normalised), as GE signs it
    uriEscapePath: false,
    // GE sends no X-Amz-Content-Sha256 header
    applyChecksum: false,
  });
}
