/**
 * The lossless JSON value model of gex (extractor, store and server alike): JSON decoded into
 * ordered maps with integer and float tokens kept apart and int64 values exact, and written back
 * exactly.
 */
export * from './value.js';
export * from './decode.js';
export * from './stringify-exact.js';
