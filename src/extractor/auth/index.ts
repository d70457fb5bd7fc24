/**
 * Generic Extractor's authentication methods (docs/ge-behaviour.md#authentication): one module per method behind
 * the AuthMethod interface, applied by the HttpClient to every attempt of every request.
 */
export { SYSTEM_RUNTIME, type AuthMethod, type AuthRuntime, type SecretSink } from './auth-method.js';
export { AwsSigner, awsCredentials, type AwsCredentials } from './aws-signature.js';
export { AUTH_TYPES, createAuth, type AuthFactoryOptions } from './factory.js';
export { maskingLogger } from './masking-logger.js';
export { mergeQueries } from './query-merge.js';
export { oauth1Header, type OAuth1Credentials } from './oauth10.js';
