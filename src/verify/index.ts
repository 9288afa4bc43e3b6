/**
 * streamgate/verify: checks the signatures streamgate (or any Standard
 * Webhooks / Stripe-style sender) puts on a request, for receivers. Self-
 * contained: Web Crypto and TextEncoder only, no node: module, no Buffer, no
 * dependency, so it runs in Node >= 20, Deno, Bun, browsers and edge
 * runtimes. Every function is async and answers `{ ok: true, … }` or
 * `{ ok: false, reason, message }`; it throws (TypeError) only for mistakes
 * in its own arguments, such as no secret. docs/verify.md.
 */
export { verifyStandard, type VerifyStandardInput, type VerifyStandardResult, type VerifyStandardSuccess } from './standard.js';
export { verifyServiceSignature, type VerifyServiceInput, type VerifyServiceResult, type VerifyServiceSuccess } from './service-signature.js';
export { verifyPaymentsSignature, type VerifyPaymentsInput, type VerifyPaymentsResult, type VerifyPaymentsSuccess } from './payments-signature.js';
export type { Body, HeadersLike, VerifyFailure, VerifyFailureReason } from './common.js';
