// Secret detection: rules as data (security/secrets/*.yaml), batch redaction and the streaming redactor.
export {
  BUNDLED_SECRET_FILES,
  SecretRuleError,
  compileSecretRules,
  loadSecretRules,
  secretRuleSubset,
  type KeywordAnchor,
  type SecretRule,
  type SecretRuleSet,
} from './rules';
export { findSecrets, redactSecrets, redactionPlaceholder, type SecretFinding } from './scan';
export { shannonEntropy } from './entropy';
export { KnownValues, installProcessKnownValues, knownValueSkipReason, processKnownValues, type KnownValueMatch } from './known-values';
export { StreamingRedactor, type FlushScheduler, type StreamingRedactorOptions } from './streaming';
export { RegexSyntaxError } from './regex-syntax';
