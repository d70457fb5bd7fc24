/**
 * Everything that exists only to behave exactly like PHP (Generic Extractor's runtime): the
 * value model, JSON decoding/encoding, float rendering, serialize(), query strings.
 * The rest of gex reads as ordinary TypeScript on top of these.
 */
export * from './values.js';
export * from './byte-string.js';
export * from './float-format.js';
export * from './json-decode.js';
export * from './json-encode.js';
export * from './serialize.js';
export * from './query-string.js';
export * from './build-url.js';
export * from './guzzle-uri.js';
export * from './json-exact.js';
export * from './functions.js';
export * from './guzzle-query.js';
export * from './loose-compare.js';
export * from './var-export.js';
export * from './json-round-trip.js';
export * from './sprintf.js';
