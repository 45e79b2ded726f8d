export * from './types';
export * from './dialect';
export {
  mapToolCall,
  mapToolCallAny,
  toolMapsFor,
  BUILTIN_TOOL_MAPS,
  MAX_ACTIONS_PER_CALL,
  shellQuote,
  type AgentToolMap,
  type MappedAction,
  type ToolMapping,
  type ToolRule,
} from './tool-map';
export { parseApplyPatch, type ParsedPatch } from './apply-patch';
export { refusalText, postToolContext, type OutputFinding, type RefusalInput } from './messages';
export {
  REWRITE_FORMS,
  SandboxRewriteError,
  claudeCommandRules,
  cliCommandRules,
  codexOwnSandbox,
  httpHostPort,
  rewriteAnswer,
  rewriteTarget,
  rewrittenInput,
  sandboxHosts,
  sandboxedCommand,
  singleQuote,
  type NetworkFacts,
  type RewriteForm,
  type RewriteTarget,
  type SandboxExecTarget,
  type SandboxToolSpec,
} from './sandbox-rewrite';
