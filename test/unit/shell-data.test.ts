// The examples of the data interpreter (src/engine/shell/data-handler.ts): the operand table's `handler: data` entries,
// each run through analyzeShell with its exact effects (security/shell/operands/).
import { runOperandExamples } from './helpers/operand-examples';

describe('shell commands: data', () => {
  runOperandExamples('data');
});
