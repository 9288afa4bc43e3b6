/**
 * The package entry point for code that uses streamgate as a library: today
 * the receiver verifier (the same as `streamgate/verify`, docs/verify.md).
 */
export * from './verify/index.js';
