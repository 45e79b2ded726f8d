// The engine's one entry point for the extension, the CLI, the hook bridge and the tests.
export * from './types';
export { errorMessage } from './error-message';
export type { ClockPort, FileFacts, FileSystemPort } from './ports';
export { LEXICAL_FS, SYSTEM_CLOCK } from './ports';
export { Engine, type EngineOptions, type CheckResult, type PathExplanation } from './engine';
export { PathError, normalizePath, resolveActionPath, matchKey } from './paths';
export { builtinTables, compileTables, validateTable, type ProtectionRule, type ProtectionTable } from './protection/tables';
export { checkProtection, effectOf, pathTouchesOf, type PathTouch, type ProtectionResult } from './protection/check';
export { analyzeShell, type ShellAnalysis, type ShellParser, type ShellContext } from './shell/analyze';
export { checkUrlSyntax, checkAddress, checkResolvedAddresses, type SsrfPolicy, type SsrfVerdict } from './ssrf';
export {
  planPatch,
  parsePatch,
  fileStateKey,
  type FilePlan,
  type PatchContext,
  type PatchFsPort,
  type PatchOp,
  type PatchPlan,
  type PatchRefusal,
  type PlanResult,
} from './patch';
export {
  inspect,
  transformForPrompt,
  wrapUntrusted,
  neutralizeMarkers,
  withheldNotice,
  matrixAction,
  parsePhase,
  parseTrust,
  type ContentPhase,
  type TrustLabel,
  type ContentAction,
  type ContentFinding,
  type InspectionResult,
  type PromptTransform,
} from './content';
export { planSandbox, withRequiredHides, SandboxPlanError, type RequiredHide, type SandboxPlan, type SandboxMount } from './sandbox/plan';
