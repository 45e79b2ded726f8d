// The command operand table (security/shell/operands/): every registered command name is in exactly
// one entry, every name has an example, and every example gives exactly the effects it states.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { commandModules, registeredCommandNames, type CommandRegistry } from '../../src/engine/shell/commands';
import { OPERAND_EXAMPLE_MODULES, commandWord, sameName } from './helpers/operand-examples';
import {
  OPERAND_TABLE_FILES,
  OperandTableError,
  operandEntries,
  validateOperandTable,
  type OperandTable,
} from '../../src/engine/shell/operands';
import { loadYaml, yamlFilesUnder } from './helpers/repo';

const DIR = 'security/shell/operands';
const files = yamlFilesUnder(DIR).map((f) => ({ file: f, table: loadYaml<OperandTable>(f) }));

describe('shell operand table (security/shell/operands)', () => {
  const validate = new Ajv({ allErrors: true }).compile(loadYaml<object>(`${DIR}/schema.json`));
  it('has the files the engine loads, each valid against schema.json and the engine validator', () => {
    assert.deepEqual(files.map((f) => f.file).sort(), OPERAND_TABLE_FILES.map((f) => f.file).sort());
    for (const { file, table } of files) {
      assert.ok(validate(table), `${file}: ${JSON.stringify(validate.errors)}`);
      validateOperandTable(table, file);
    }
    assert.ok(operandEntries().size > 0);
  });

  const BECAUSE = 'the destination is computed from each source';
  // Refused by the engine validator and by schema.json alike.
  const codeBecauseRefusals: [string, unknown, RegExp][] = [
    [
      'a code entry that does not say why it is code',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', examples: [{ run: 'x a' }] }],
      },
      /`x`: a code handler says in code_because what the data interpreter cannot express/,
    ],
    [
      'a code entry whose reason is too short to say anything',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', code_because: 'needs code', examples: [{ run: 'x a' }] }],
      },
      /`x`: a code handler says in code_because/,
    ],
    [
      'a data entry with a reason to be code',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', operands: 'read', code_because: BECAUSE, examples: [{ run: 'x a' }] }],
      },
      /`x`: a data handler has no code_because/,
    ],
  ];
  for (const [what, data] of codeBecauseRefusals) it(`schema.json refuses ${what}`, () => assert.equal(validate(data), false));
  it('schema.json takes a code entry that says why it is code, and a data entry that does not', () => {
    const table = (command: object) => ({ version: 1, family: 'x', description: 'a description', commands: [command] });
    const code = { names: ['x'], handler: 'code', module: 'files', code_because: BECAUSE, examples: [{ run: 'x a' }] };
    assert.ok(validate(table(code)), JSON.stringify(validate.errors));
    assert.ok(
      validate(table({ names: ['x'], handler: 'data', operands: 'read', examples: [{ run: 'x a' }] })),
      JSON.stringify(validate.errors),
    );
  });

  const refusals: [string, unknown, RegExp][] = [
    ...codeBecauseRefusals,
    [
      'unknown top key',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', code_because: BECAUSE }],
        extra: 1,
      },
      /unknown key `extra`/,
    ],
    [
      'code without module',
      { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'code' }] },
      /names its module/,
    ],
    [
      'code with data keys',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', code_because: BECAUSE, operands: 'read' }],
      },
      /`operands` is for the data interpreter/,
    ],
    [
      'unknown role',
      { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'data', operands: 'eat' }] },
      /operands must be one of/,
    ],
    [
      'option value role',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', option_values: { o: 'write' } }],
      },
      /option_values maps options/,
    ],
    [
      'also names another command',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', code_because: BECAUSE, examples: [{ run: 'x a', also: ['y'] }] }],
      },
      /also names names of this entry/,
    ],
    [
      'a posix key on a cmd.exe command',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], registry: 'cmd', handler: 'data', operands: 'read', options: { short: 'o' } }],
      },
      /`options` is not read for cmd commands/,
    ],
    [
      'a cmd.exe command that runs another',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], registry: 'cmd', handler: 'data', operands: ['none', 'runs'] }],
      },
      /a cmd.exe command that runs another is code/,
    ],
    [
      'a PowerShell parameter spelled with capitals (it would never match: names are compared in lower case)',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x-y'], registry: 'powershell', handler: 'data', parameters: { customMethod: 'none' } }],
      },
      /parameters maps lower-case names/,
    ],
    [
      'a PowerShell positional parameter that is not a parameter',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x-y'], registry: 'powershell', handler: 'data', parameters: { path: 'read' }, positional: ['uri'] }],
      },
      /positional parameter `uri` is not one of its parameters/,
    ],
    [
      'posix operands on a PowerShell cmdlet',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x-y'], registry: 'powershell', handler: 'data', parameters: { path: 'read' }, operands: 'read' }],
      },
      /`operands` is not read for powershell commands/,
    ],
    [
      'runs before another operand role',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', options: { posix: true }, operands: ['runs', 'read'] }],
      },
      /`runs` must be the last operand role/,
    ],
    [
      'runs without options ending at the command',
      { version: 1, family: 'x', description: 'a description', commands: [{ names: ['x'], handler: 'data', operands: 'runs' }] },
      /needs options.posix/,
    ],
    [
      'a runs role for an option value',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', options: { short: 'c' }, option_values: { '-c': 'runs' } }],
      },
      /option_values maps options to one of read, write, delete, read_write, none, contacted$/,
    ],
    [
      'no-command options on a command that runs none',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', operands: 'read', no_command_options: ['-p'] }],
      },
      /are for commands that run one/,
    ],
    [
      'an opaque reason that is not a sentence',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'data', operands: 'none', opaque: 'no' }],
      },
      /opaque is the reason/,
    ],
    [
      'unknown example key',
      {
        version: 1,
        family: 'x',
        description: 'a description',
        commands: [{ names: ['x'], handler: 'code', module: 'files', code_because: BECAUSE, examples: [{ run: 'x a', read: ['a'] }] }],
      },
      /unknown key `read`/,
    ],
  ];
  for (const [what, data, why] of refusals) {
    it(`refuses a malformed table: ${what}`, () =>
      assert.throws(
        () => validateOperandTable(data, 't'),
        (e: Error) => e instanceof OperandTableError && why.test(e.message),
      ));
  }

  describe('architecture: every registered command has data and an example', () => {
    const registered = registeredCommandNames();
    for (const [registry, names] of registered) {
      it(`${registry}: every registered name is in exactly one entry, with an example of its own`, () => {
        const entries = operandEntries();
        const missing = names.filter((n) => !entries.has(`${registry} ${n}`));
        assert.deepEqual(missing, [], `registered ${registry} commands with no entry in ${DIR}`);
        const withoutExample = names.filter((n) => {
          const e = entries.get(`${registry} ${n}`)!;
          return !(e.examples ?? []).some((x) => sameName(registry, commandWord(x.run), n) || (x.also ?? []).includes(n));
        });
        assert.deepEqual(withoutExample, [], `registered ${registry} commands with no example`);
      });
    }
    it('names no command that no registry has', () => {
      const unknown = [...operandEntries().keys()].filter((k) => {
        const [registry, name] = k.split(' ') as [CommandRegistry, string];
        return !registered.get(registry)!.includes(name);
      });
      assert.deepEqual(unknown, []);
    });
    it('each entry says where its names are handled: data, or the code module that registers them', () => {
      const modules = commandModules();
      for (const [key, entry] of operandEntries())
        assert.equal(modules.get(key), entry.handler === 'data' ? 'data' : entry.module, `${key}`);
    });
    it('each example runs the entry it is listed in', () => {
      for (const { file, table } of files) {
        for (const e of table.commands) {
          for (const x of e.examples ?? [])
            assert.ok(
              e.names.some((n) => sameName(e.registry ?? 'posix', commandWord(x.run), n)),
              `${file}: \`${x.run}\` is not a command of [${e.names.join(' ')}]`,
            );
        }
      }
    });
  });

  it('every example is run by the test file of its module', () => {
    const modules = new Set(files.flatMap(({ table }) => table.commands.map((e) => e.module ?? 'data')));
    assert.deepEqual([...modules].sort(), [...OPERAND_EXAMPLE_MODULES].sort());
  });
});
