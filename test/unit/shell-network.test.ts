// The examples of src/engine/shell/commands/network.ts: the operand table's entries with `module: network`,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: network', () => {
  runOperandExamples('network');
});
