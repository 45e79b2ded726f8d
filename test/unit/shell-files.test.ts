// The examples of src/engine/shell/commands/files.ts: the operand table's entries with `module: files`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: files', () => {
  runOperandExamples('files');
});
