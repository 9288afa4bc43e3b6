/**
 * The package entry point for code that uses streamgate as a library: today
 * the receiver helper that checks the signatures streamgate puts on deliveries.
 */
export { verifyServiceSignature, type VerifyInput, type VerifyResult } from './delivery/signing/verify-signature.js';
