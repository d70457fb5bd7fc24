/**
 * Generic Extractor's PHP 7.4 behaviour, one definition per rule: casts and comparisons, PHP
 * arrays, json_encode, serialize(), float rendering, query strings and URLs (PHP's and Guzzle's),
 * sprintf, byte strings and the PHP functions of user functions.
 * The rest of gex reads as ordinary TypeScript on top of these.
 */
export * from './casts.js';
export * from './arrays.js';
export * from './data-from-path.js';
export * from './byte-string.js';
export * from './strings.js';
export * from './float-format.js';
export * from './json-encode.js';
export * from './json-round-trip.js';
export * from './serialize.js';
export * from './var-export.js';
export * from './query-string.js';
export * from './parse-url.js';
export * from './build-url.js';
export * from './guzzle-uri.js';
export * from './guzzle-query.js';
export * from './loose-compare.js';
export * from './sprintf.js';
export * from './functions.js';
export * from './safe-names.js';
