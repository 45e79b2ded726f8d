// Lint: the layering the architecture depends on, and the mistakes the type checker lets through.
// `npm run check` runs it (with the build, the type check and the unit tests) before the slower stages.
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

// What each layer may not reach. The engine is pure: the same code runs in the extension, the CLI, the
// hook bridge and the sandbox helper, so effects only come in through its ports (src/engine/ports.ts).
const OUTER_LAYERS = ['./src/node', './src/vscode', './src/cli', './src/webview', './src/sandbox-helper', './src/sandbox-init'];
const layerZones = [
  {
    target: './src/engine',
    from: OUTER_LAYERS,
    message: 'src/engine is pure: effects come in through its ports, not from an outer layer.',
  },
  {
    target: './src/node',
    from: ['./src/cli', './src/vscode'],
    message: 'src/node is shared by the CLI, the hooks and the extension: it never imports them.',
  },
  {
    target: './src/webview',
    from: ['./src/node', './src/vscode', './src/cli', './src/sandbox-helper', './src/sandbox-init'],
    message: 'the webview runs in the browser sandbox: it shares only its protocol and pure engine code.',
  },
  {
    target: './src/sandbox-init',
    from: ['./src/engine', './src/node', './src/vscode', './src/cli'],
    message: 'the sandbox forwarder runs inside the sandbox with nothing of the engine in it.',
  },
  { target: './src/cli', from: ['./src/vscode'], message: 'the CLI runs without VS Code.' },
  { target: './src/sandbox-helper', from: ['./src/vscode', './src/cli'], message: 'the sandbox helper is a plain Node process.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'out-*/**', 'node_modules/**', '.e2e/**', 'scratch/**', 'media/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'types/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      // Dependencies are parsed too (no-cycle follows them): they are TypeScript.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its error: on a decision path that would be a silent allow or a crash.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-require-imports': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'no-restricted-imports': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
  {
    // Pure engine and browser code: no Node built-ins, no vscode.
    files: ['src/engine/**/*.ts', 'src/webview/**/*.ts'],
    rules: {
      'import-x/no-nodejs-modules': 'error',
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'only src/vscode talks to VS Code.' }] }],
    },
  },
  {
    files: ['src/node/**/*.ts', 'src/cli/**/*.ts', 'src/sandbox-helper/**/*.ts', 'src/sandbox-init/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'only src/vscode talks to VS Code.' }] }] },
  },
);
