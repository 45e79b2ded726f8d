// The layering is enforced by ESLint (eslint.config.mjs, run by `npm run check`): these tests prove the
// configuration refuses what each layer may not import, so a rule that silently stops matching fails here.
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import { repoRoot } from './helpers/repo';

describe('lint configuration: the layers', function () {
  this.timeout(60_000);
  let eslint: ESLint;
  before(() => {
    // Snippets are linted under made-up file names, so the type-aware rules (which need the file in the
    // TypeScript project) are off here; the import rules only need the path and the resolver.
    eslint = new ESLint({
      cwd: repoRoot(),
      overrideConfig: {
        languageOptions: { parserOptions: { projectService: false } },
        rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
      },
    });
  });
  const problems = async (file: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: file });
    return result!.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
  };
  const refused = async (file: string, code: string, rule: string) => {
    const found = await problems(file, code);
    assert.ok(
      found.some((m) => m.startsWith(`${rule}:`)),
      `${file} \`${code.trim()}\` should be refused by ${rule}; got ${JSON.stringify(found)}`,
    );
  };

  it('the engine imports no outer layer, no Node built-in and not vscode', async () => {
    await refused(
      'src/engine/lint-probe.ts',
      "import { nodeFileSystem } from '../node/fs-port';\nexport const x = nodeFileSystem;\n",
      'import-x/no-restricted-paths',
    );
    await refused(
      'src/engine/lint-probe.ts',
      "import { runCheck } from '../cli/commands';\nexport const x = runCheck;\n",
      'import-x/no-restricted-paths',
    );
    await refused('src/engine/lint-probe.ts', "import fs from 'node:fs';\nexport const x = fs;\n", 'import-x/no-nodejs-modules');
    await refused('src/engine/lint-probe.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", 'no-restricted-imports');
  });

  it('src/node never imports the CLI or the extension; only src/vscode imports vscode', async () => {
    await refused(
      'src/node/lint-probe.ts',
      "import { runCheck } from '../cli/commands';\nexport const x = runCheck;\n",
      'import-x/no-restricted-paths',
    );
    await refused(
      'src/node/lint-probe.ts',
      "import { activate } from '../vscode/extension';\nexport const x = activate;\n",
      'import-x/no-restricted-paths',
    );
    await refused('src/node/lint-probe.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", 'no-restricted-imports');
    await refused('src/cli/lint-probe.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", 'no-restricted-imports');
  });

  it('the webview imports its protocol and nothing of the host', async () => {
    await refused(
      'src/webview/lint-probe.ts',
      "import { summaryOf } from '../node/audit-view';\nexport const x = summaryOf;\n",
      'import-x/no-restricted-paths',
    );
    await refused('src/webview/lint-probe.ts', "import path from 'node:path';\nexport const x = path;\n", 'import-x/no-nodejs-modules');
    assert.deepEqual(
      await problems('src/webview/lint-probe.ts', "import { PAGE_SIZE } from './protocol';\nexport const x = PAGE_SIZE;\n"),
      [],
    );
  });

  it('a clean engine file passes, and type-only imports are written as such', async () => {
    assert.deepEqual(
      await problems('src/engine/lint-probe.ts', "import { actionSpec } from './actions';\nexport const x = actionSpec('read_file');\n"),
      [],
    );
    await refused(
      'src/engine/lint-probe.ts',
      "import { Tier } from './types';\nexport const t: Tier = 0;\n",
      '@typescript-eslint/consistent-type-imports',
    );
  });
});
