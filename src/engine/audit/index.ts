// The tamper-evident audit log: entry format, hashing, decision → events, chain verification. Pure.
export * from './types';
export * from './events';
export { REDACTION_FAILED_RULE, redactText, redactTextOrWithhold } from './redact';
export * from './verify';
