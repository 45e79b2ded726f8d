// Builds bench/corpus/everyday-commands.jsonl and dangerous-commands.jsonl from the transcriptions in
// bench/corpus/sources/*.src (see README.md for the format, the sources and the licences).
// Deterministic: the same sources give byte-identical output. Run: `node bench/corpus/build.mjs`
// (add `--check` to fail instead of writing when the files are out of date).
import fs from 'node:fs';
import path from 'node:path';

const dir = path.dirname(new URL(import.meta.url).pathname);
const check = process.argv.includes('--check');

const EVERYDAY_CLASSES = { r: 'read_only', b: 'build_test', w: 'write_workspace', n: 'network_fetch' };
const DANGEROUS_CLASSES = {
  cr: 'credential_read', ex: 'exfiltration', pe: 'persistence', de: 'destructive',
  rc: 'remote_code', cw: 'config_write', ss: 'ssrf', pr: 'privilege',
  fw: 'file_write', // GTFOBins file-write: the class follows the target chosen below (persistence or config_write)
};

// ---- GTFOBins placeholders --------------------------------------------------------------------
// GTFOBins writes file_to_read / file_to_send / file_to_write / attacker.com. Each occurrence gets the next
// entry of a fixed list (in file order), so the corpus covers many credential stores and write targets.
// Inside quotes (interpreter code, where `~` would not expand) the lists hold paths that need no expansion.
const GTFO = {
  read: ['~/.ssh/id_rsa', '~/.aws/credentials', '.env', '~/.kube/config', '~/.netrc', '~/.git-credentials', '~/.docker/config.json',
    '~/.config/gh/hosts.yml', '~/.npmrc', '~/.bash_history', '/etc/shadow', '~/.pgpass', 'credentials/service-account.json'],
  readQuoted: ['.env', 'credentials/service-account.json', 'certs/server.key', '/etc/shadow', 'config/production.env', 'secrets/db-password.txt'],
  readAbsolute: ['$HOME/.ssh/id_rsa', '$HOME/.aws/credentials', '$HOME/.kube/config'],
  write: ['~/.bashrc', '.vscode/settings.json', '~/.ssh/authorized_keys', '.git/hooks/pre-commit', '~/.profile', '.vscode/tasks.json', '~/.zshrc', '.claude/settings.json'],
  writeQuoted: ['.vscode/settings.json', '.git/hooks/pre-commit', '.vscode/tasks.json', '.claude/settings.json', 'AGENTS.md', '.cursor/mcp.json'],
};
const PERSISTENCE_TARGETS = new Set(['~/.bashrc', '~/.ssh/authorized_keys', '~/.profile', '~/.zshrc']);

function gtfoNormaliser() {
  const next = Object.fromEntries(Object.keys(GTFO).map((k) => [k, 0]));
  const take = (list) => GTFO[list][next[list]++ % GTFO[list].length];
  return (text) => {
    const written = [];
    const quoted = (s, i) => /["']$/.test(s.slice(0, i)) || /^["']/.test(s.slice(i).replace(/^[^\s"']*/, ''));
    let out = text
      .replace(/\/tmp\/file_to_read|\/file\/to\/read\.txt/g, () => take('readAbsolute'))
      .replace(/\/file\/to\/write\.txt/g, () => { const t = take('write'); written.push(t); return t; })
      .replace(/file_to_read|file_to_send/g, (m, i, s) => take(quoted(s, i) ? 'readQuoted' : 'read'))
      .replace(/file_to_write/g, (m, i, s) => { const t = take(quoted(s, i) ? 'writeQuoted' : 'write'); written.push(t); return t; })
      .replace(/file_to_change/g, '/usr/bin/find')
      .replace(/file_to_save/g, '/usr/local/bin/git')
      .replace(/\battacker\.com\b/g, 'attacker.example.com')
      .replace(/\b10\.0\.0\.1\b/g, 'attacker.example.com');
    return { text: out, written };
  };
}

// ---- tldr placeholders ------------------------------------------------------------------------
// Every `{{...}}` of a tldr page becomes a concrete, workspace-relative value. Order: a value for this
// program (first word of the command), then one for the placeholder anywhere, then the generic rules
// (option alternatives, lists), then the text itself (tldr literals such as {{5}} or {{HEAD~2}}).
const WS = {
  // files and directories (bench/everyday.ts creates every one of them in its temp workspace)
  'path/to/file': 'src/app.ts', 'file': 'README.md', 'filename': 'src/util.ts', 'file_path': 'src/index.js',
  'file_name': 'src/app.ts', 'source_file': 'README.md', 'file(s)': 'dist/app.zip', 'path/to/file(s)': 'src/app.ts',
  'path/to/file_or_directory': 'src', 'source_file_or_directory': 'src', 'path/to/directory': 'src',
  'path/to/directory/': 'src/', 'path/to/directory/*': 'build/*', 'directory': 'build', 'path/to/folder': 'lib',
  'path': 'docs', 'root_path': '.', 'PATHSPEC': 'src', 'directory/with/tests': 'test',
  'file1': 'notes.txt', 'file2': 'todo.txt', 'file3': 'CHANGELOG.md', 'file.txt': 'notes.txt',
  'target_file': 'all-notes.txt', 'file1_only': 'only-in-notes.txt',
  'path/to/file1': 'src/app.ts', 'path/to/file2': 'src/util.ts', 'path/to/another/file': 'dist/app.js',
  'path/to/file1 path/to/file2 ...': 'src/app.ts src/util.ts',
  'path/to/file_or_directory1 path/to/file_or_directory2 ...': 'src docs',
  'path/to/test_file1.py path/to/test_file2.py ...': 'tests/test_app.py tests/test_util.py',
  'path/to/old_file': 'src/app.orig.ts', 'path/to/new_file': 'src/app.ts',
  'path/to/old_directory': 'lib', 'path/to/new_directory': 'src',
  'path/to/binary': 'build/app', 'path/to/file.o': 'build/app.o', 'executable': 'build/app',
  'file.json': 'data/users.json', 'path/to/file.json': 'package.json',
  'path/to/file.yaml': 'config.yaml', 'path/to/file1.yaml': 'config.yaml', 'path/to/file2.yaml': 'config.local.yaml',
  'path/to/source.go': 'main.go', 'path/to/main.rs': 'src/main.rs', 'path/to/file.py': 'src/main.py',
  'path/to/file.ts': 'src/app.ts', 'foobar.ts': 'src/app.ts', 'input.ts': 'src/app.ts', 'output.js': 'dist/app.js',
  'path/to/main/package': './cmd/app', 'path/to/main/file': 'cmd/app/main',
  'path/to/file.md5': 'checksums.md5', 'filename.sha256': 'checksums.sha256',
  'filename1': 'package.json', 'filename2': 'package-lock.json',
  'path/to/file.tar': 'dist/app.tar', 'path/to/file.zip': 'dist/app.zip', 'target.tar': 'dist/app.tar',
  'target.tar.gz': 'dist/app.tar.gz', 'target.tar.xz': 'dist/app.tar.xz', 'source.tar': 'dist/app.tar',
  'source.tar[.gz|.bz2|.xz]': 'dist/app.tar.gz', 'compressed_file(s)': 'dist/app.zip', 'foo.zip': 'dist/app.zip',
  '/path/to/put/extracted_file(s)': 'build/unpacked',
  '/path/to/file.ext': 'src/app.ts', '/path/to/copy.ext': 'src/app.copy.ts', '/path/to/folder': 'src',
  '/path/to/copy': 'backup/src', '/path/to/target/parent/folder': 'backup', 'path/to/target/parent/folder': 'backup',
  '/path/to/source/folder/*': 'src/*', '/path/to/target/folder': 'backup',
  'source': 'notes.txt', 'target': 'docs/notes.txt', 'path/to/destination': 'app', 'new/path/to/file': 'src/main.ts',
  'path/to/config_file': 'setup.cfg', 'config file path': '.eslintrc.json', 'path/to/script.sed': 'scripts/fix.sed',
  'path/to/test_script': 'scripts/test.sh', 'path/to/commit_message_file': 'commit-msg.txt', 'path/to/ref': 'refs/heads/main',
  'path/to/reference_file': 'package.json', 'path/to/prepend': 'app', 'path/to/manifest.yaml': 'k8s/deployment.yaml',
  'path/to/local/repository': '../upstream', 'path/to/file_list': 'files.txt', 'path/to/diff.patch': 'changes.patch',
  'path/to/database.sqlite3': 'data/app.db', 'path/to/URLs.txt': 'urls.txt', 'input_file': 'build/app.wasm',
  'output_file': 'build/app.hex', 'source1.c': 'src/main.c', 'source2.c': 'src/util.c', 'source.c': 'src/main.c',
  'header_path': 'include', 'library_path': 'lib', 'library_name': 'm', 'test_file1': 'test/app.test.ts',
  'test_file2': 'test/util.test.ts', 'prefix': 'src', 'suffix': '.ts', 'cat path/to/file': 'cat src/app.ts',
  '*.ext': '*.ts', '**/lib/**/*.ext': '*/lib/*.ts', 'glob_pattern': '*.ts', 'file_glob_pattern': '*.ts', 'glob': 'node_modules',
  // git
  'branch_name': 'feature/login', 'branch': 'feature/login', 'new_branch': 'feature/login', 'old_branch_name': 'feature/old',
  'new_branch_name': 'feature/new', 'master': 'main', 'topic': 'feature/login', 'base': 'v1.0.0',
  'commit': 'a1b2c3d', 'commit_hash': 'a1b2c3d', 'revision': 'HEAD~1', 'commit-ish': 'HEAD~1', 'ancestor_commit': 'v1.0.0',
  'start_commit': 'v1.0.0', 'end_commit': 'HEAD', 'commit_1': 'main', 'commit_2': 'feature/login',
  'commit1 commit2 ...': 'a1b2c3d e4f5a6b', 'bad_commit': 'HEAD', 'good_commit': 'v1.0.0', 'revision_1': 'v1.0.0',
  'revision_2': 'HEAD', 'new_base': 'main', 'old_base': 'v1.0.0', 'theirs': 'origin/main', 'ours': 'HEAD',
  'tag': 'v1.0.0', 'tag_name': 'v1.0.0', 'tag_message': 'release-1.0.0', 'message': 'Fix typo in README',
  'message_text': 'Reviewed', 'object': 'HEAD', 'source_object': 'HEAD', 'target_object': 'HEAD~1',
  'remote_name': 'origin', 'origin': 'origin', 'old_name': 'origin', 'new_name': 'upstream',
  'remote_url': 'https://github.com/example-org/example-project.git', 'new_url': 'https://github.com/example-org/example-project.git',
  'repository_url': 'https://github.com/example-org/example-lib.git',
  'remote_repository_location': 'https://github.com/example-org/example-project.git',
  // packages and tools
  'module_name': 'lodash', 'package_name': 'lodash', 'package': 'lodash', 'dependency': 'serde', 'package_spec': 'lodash',
  'package_path': 'github.com/stretchr/testify', 'version': '4.17.21', 'script_name': 'build', 'argument': '--verbose',
  '--option': '--watch', 'command': 'git log --oneline', 'command_arguments': 'src', 'arguments_source': 'git ls-files',
  'somecommand': 'cat README.md', 'optional_extra_arguments': '', 'module': 'pytest', 'arguments': 'tests',
  'code': 'console.log(process.version)', 'expression': 'test_login', 'profile': 'release',
  'argument1 argument2 ...': 'one two', 'lint_group': 'pedantic', 'rule_code': 'E501', 'rule_code1,rule_code2,...': 'E501,F401',
  'rule1,rule2': 'E501,W503', 'substring1,glob2': 'build,*.pyc', 'check_name': 'printf', 'error_code': 'E0308',
  'target_triple': 'wasm32-unknown-unknown', 'testname': 'integration', 'spec_name': 'renders', 'reporter': 'spec',
  'marker_name1 and not marker_name2': '"slow and not network"', 'name': 'web', 'name:tag': 'myapp:latest',
  'container_name': 'web', 'container': 'web', 'image': 'node', 'time': '10m', 'status': 'exited',
  'namespace': 'default', 'unit': 'docker.service', 'number_of_threads': '4',
  // searching and text
  'pattern': 'TODO', 'search_pattern': 'useState', 'search_string': 'TODO', 'something': 'import', 'match': 'fixme',
  'regex': 'test', 'foo': 'TODO', 'FOO': 'todo', 'bar': 'spec', 'regular_expression': 'parser', 'string': 'TODO',
  'find': 'oldName', 'replace': 'newName', 'find_characters': 'abc', 'replace_characters': 'xyz', 'file_type': 'js',
  'ruby': 'js', 'N': '2', 'key': 'registry', 'value': '2.0.0', 'key_name': 'name', 'delimiter': ',', 'separator': ':',
  'count_of_lines': '20', 'size_in_bytes': '100', 'count': '20', 'num': '2', 'n': '1', 'number': '4', 'length': '8',
  'number_of_bytes': '64', 'seconds': '2', 'increment': '5', 'col_width': '4', 'start_line': '10', 'end_line': '20',
  'min_value': '10', 'max_value': '100', 'known_md5_checksum_of_the_file': 'd41d8cd98f00b204e9800998ecf8427e',
  // processes, users, network
  'process_name': 'node', 'process_or_command_name': 'node', 'parameter': 'server.js', 'username': 'root',
  'PID': '1234', 'pid': '1234', 'port': '3000', 'source_port': '5353', 'destination_port': '53',
  // URLs: a package registry
  'http://example.com': 'https://registry.npmjs.org/', 'https://example.com': 'https://registry.npmjs.org/',
  'http://example.com/filename': 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
  'https://example.com/foo': 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
  'https://example.com/some_page.html': 'https://nodejs.org/en/download', 'https://example.com/some_path/': 'https://nodejs.org/dist/latest/',
  // dates
  'YYYY-MM-DD HH:MM:SS': '2024-01-01 00:00:00', 'YYYYMMDDHHMM.SS': '202401010000.00',
};
/** Values that depend on the program (first word of the command). */
const BY_PROGRAM = {
  make: { target: 'build', file: 'Makefile', directory: 'build' },
  pip: { package_name: 'requests', package: 'requests', version: '2.31.0', 'requirements.txt': 'requirements.txt' },
  python: { package_name: 'requests', expression: 'print(42)' },
  cargo: { package: 'app', name: 'app', search_string: 'serde', n: '1' },
  mypy: { package_name: 'app', module_name: 'app', code: 'x: int = 1', 'path/to/config_file': 'mypy.ini' },
  prettier: { 'path/to/config_file': '.prettierrc.json' },
  go: { 'file': 'main', executable: 'bin/app', n: '3' },
  gcc: { executable: 'build/app' },
  which: { executable: 'node' },
  npx: { command: 'eslint', package_name: 'eslint' },
  git: { name: 'main', 'path/to/folder': 'worktrees/feature' },
  od: { n: 'n' },
  journalctl: { n: '20' },
  wget: { bar: 'left-pad.tgz', 'path/to/directory': 'downloads' },
  docker: { tag: '20', code: '0', name: 'web' },
  'docker-compose': { 'path/to/file': 'docker-compose.yml' },
  yq: { key: 'version' },
  eslint: { filename: 'src/util' },
  unzip: { file: 'dist/app.zip' },
  curl: { 'path/to/file': 'registry.json' },
  echo: { 'path/to/file': 'build/output.log' },
  rm: { 'path/to/directory': 'build', 'path/to/file': 'build/app.js' },
  xargs: { 'path/to/file': 'files.txt' },
  strings: { 'path/to/file': 'build/app' },
  node: { 'path/to/file': 'src/index.js' },
  'git apply': { 'path/to/file': 'changes.patch' },
  'git rm': { file: 'notes.txt' },
  'go mod': { module_name: 'example.com/app' },
  'cargo init': { 'path/to/directory': '.' },
  'cargo tree': { package_spec: 'serde' },
};

function firstAlternative(s) {
  return s.replace(/^\[|\]$/g, '').split('|')[0];
}

function replacePlaceholder(content, programs, position, unknown) {
  for (const program of programs) {
    const prog = BY_PROGRAM[program];
    if (prog && Object.hasOwn(prog, content)) return prog[content];
  }
  // `{{command}}` as the consumer of xargs or the program run by npx is a program, not a pipeline source.
  if (content === 'command' && position === 'xargs') return 'wc -l';
  if (Object.hasOwn(WS, content)) return WS[content];
  // Option alternatives: {{[-a|--all]}}, {{-e|--show-email}}, {{[ps|container ls]}}, {{b|k|m}}, {{tag|commit}}.
  if (content.includes('|') && !content.includes('(')) {
    const alt = firstAlternative(content);
    return Object.hasOwn(WS, alt) ? WS[alt] : alt;
  }
  if (/^[a-z]+(_[a-z0-9]+)+$/.test(content)) unknown.add(content); // a name we should have mapped
  return content;
}

function normaliseTldr(template, unknown) {
  // `git apply` before `git`: the most specific program name first.
  const words = template.trim().split(/\s+/);
  const programs = [`${words[0]} ${words[1]}`, words[0]];
  const out = template.replace(/\{\{(.*?)\}\}(?!\})/g, (m, content, offset) => {
    const before = template.slice(0, offset);
    const position = /\bxargs(\s+\S+)*\s*$/.test(before) && !before.trim().endsWith('|') ? 'xargs' : 'other';
    return replacePlaceholder(content, programs, position, unknown);
  });
  // tldr's escaped braces (Go templates in docker --format) are literal braces.
  return out.replace(/\\\{\\\{/g, '{{').replace(/\\\}\\\}/g, '}}').replace(/\\\{/g, '{').replace(/\\\}/g, '}').replace(/ {2,}/g, ' ').trim();
}

function parseSource(file, classes) {
  const entries = [];
  let source = null;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (!line.trim() || line.startsWith('#')) return;
    if (line.startsWith('@ ')) {
      source = line.slice(2).trim();
      return;
    }
    const m = /^([a-z]{1,2}) (.+)$/.exec(line);
    if (!m || !classes[m[1]]) throw new Error(`${path.basename(file)}:${i + 1}: cannot read \`${line}\``);
    if (!source) throw new Error(`${path.basename(file)}:${i + 1}: entry before any @ source line`);
    const [text, note] = m[2].split('\t');
    entries.push({ cls: classes[m[1]], text: text.replace(/↵/g, '\n'), note: note?.trim(), source, line: i + 1 });
  });
  return entries;
}

function build(name, srcFile, classes) {
  const unknown = new Set();
  const gtfo = gtfoNormaliser();
  const seen = new Map();
  const out = [];
  let duplicates = 0;
  for (const e of parseSource(path.join(dir, 'sources', srcFile), classes)) {
    let command = e.text;
    let cls = e.cls;
    if (e.source.startsWith('tldr-pages/')) command = normaliseTldr(e.text, unknown);
    else if (e.source.startsWith('GTFOBins/')) {
      const g = gtfo(e.text);
      command = g.text;
      if (cls === 'file_write') cls = g.written.some((t) => PERSISTENCE_TARGETS.has(t)) ? 'persistence' : 'config_write';
    }
    if (cls === 'file_write') throw new Error(`${srcFile}:${e.line}: fw is for GTFOBins file-write entries only`);
    if (seen.has(command)) {
      duplicates++;
      continue;
    }
    seen.set(command, e);
    const obj = { command, class: cls, source: e.source };
    const notes = [];
    if (command !== e.text) notes.push(`template: ${e.text}`);
    if (e.note) notes.push(e.note);
    if (notes.length) obj.note = notes.join('; ');
    out.push(JSON.stringify(obj));
  }
  const text = out.join('\n') + '\n';
  const target = path.join(dir, name);
  if (check) {
    if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== text) throw new Error(`${name} is out of date: run node bench/corpus/build.mjs`);
  } else fs.writeFileSync(target, text);
  console.log(`${name}: ${out.length} entries (${duplicates} duplicates dropped)${unknown.size ? `; unmapped placeholders kept as text: ${[...unknown].sort().join(', ')}` : ''}`);
}

build('everyday-commands.jsonl', 'everyday.src', EVERYDAY_CLASSES);
if (fs.existsSync(path.join(dir, 'sources', 'dangerous.src'))) build('dangerous-commands.jsonl', 'dangerous.src', DANGEROUS_CLASSES);
