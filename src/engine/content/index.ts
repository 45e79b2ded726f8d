// Content inspection by phase and trust: prompt injection, secrets, credential references and
// invisible text → findings with offsets and one action; the prompt wrapper; the instruction-file
// guard; memory poisoning (what a memory write stores).
export * from './types';
export { inspect, redact, parsePhase, parseTrust, MAX_INSPECT_CHARS, INSPECT_CHUNK, type InspectOptions } from './inspect';
export { matrixAction, combineActions, type MatrixInput } from './matrix';
export {
  transformForPrompt,
  wrapUntrusted,
  withheldNotice,
  neutralizeMarkers,
  UNTRUSTED_OPEN,
  UNTRUSTED_CLOSE,
  WITHHELD_OPEN,
  WITHHELD_CLOSE,
  MARKER_PLACEHOLDER,
  type PromptTransform,
  type WrapMeta,
} from './wrap';
export {
  loadContentRules,
  compileContentRules,
  validateContentFile,
  matchSpans,
  BUNDLED_CONTENT_FILES,
  ContentRuleError,
  type ContentRule,
  type CompiledContentRule,
} from './rules';
export { invisibleTextInInstructionWrite, INSTRUCTION_FILE_RULES, INVISIBLE_IN_INSTRUCTIONS_RULE } from './instruction-files';
export {
  memoryWriteCheck,
  memoryFindings,
  writesMemory,
  loadMemoryRules,
  compileMemoryRules,
  validateMemoryFile,
  BUNDLED_MEMORY_FILES,
  MEMORY_FILE_RULES,
  MEMORY_INJECTION_RULE,
  MEMORY_SECRET_RULE,
  MemoryRuleError,
  type MemoryRule,
  type CompiledMemoryRule,
  type CompiledMemoryRules,
  type MemoryVerdict,
  type MemoryCheckOptions,
} from './memory';
