// Information flow control: policy presets and files, path classification, sinks, the decision
// matrix and session taint. Pure: no `vscode`, no Node built-ins.
export * from './types';
export {
  IFC_PRESETS,
  IfcPolicyError,
  loadIfcPreset,
  parseIfcPolicy,
  validateIfcPolicy,
  type IfcPresetName,
  type IfcPolicyProblem,
} from './policy';
export { PUBLIC_MATERIAL, UNCLASSIFIED, classifyPath, sinkOf, sourceMatches } from './classify';
export { IFC_TAINT_NAMESPACE, IfcEngine, IfcStoreError, type IfcEngineOptions } from './engine';
export { locateYamlPath } from './locate';
