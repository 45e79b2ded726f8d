// Fail-closed file patches: the model, its limits and every check before a write (pure).
export {
  DEFAULT_PATCH_LIMITS, MAX_PATCH_FILE_BYTES, MAX_PATCH_FILES, MAX_PATCH_OPS, MAX_PATCH_PAYLOAD_BYTES, MAX_PATH_LENGTH,
  PLACEHOLDER_PATTERN, SHRINK_FACTOR, SHRINK_MIN_BYTES, SHRINK_MIN_LINES,
  isWriteOp, parsePatch, placeholdersIn, refusal, utf8Length,
  type EditOp, type EntryInfo, type PatchContext, type PatchFsPort, type PatchLimits, type PatchOp, type PatchProblem, type PatchRefusal, type WriteOp,
} from './model';
export { checkPathSyntax, countLines, decodeUtf8, fileStateKey, locateFile, planPatch, type FilePlan, type PatchPlan, type PlanResult } from './plan';
export { jsonDialectOf, parseJson, type JsonDialect } from './jsonc';
