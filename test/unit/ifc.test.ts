// Information flow control: presets as data (schema, matrices, source examples), classification,
// the decision matrix with session taint, audit mode, fail-closed store errors, policy errors with
// positions, and four worked flows (a .env read then an email, …). The flow corpus is test/cases/ifc/*.yaml.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { load } from 'js-yaml';
import { MemoryStateStore, type StateStore } from '../../src/engine/shield/types';
import {
  IFC_PRESETS,
  IFC_TAINT_NAMESPACE,
  IfcEngine,
  IfcPolicyError,
  IfcStoreError,
  UNCLASSIFIED,
  classifyPath,
  loadIfcPreset,
  parseIfcPolicy,
  sinkOf,
  sourceMatches,
  validateIfcPolicy,
  type IfcDecision,
  type IfcMode,
  type IfcPolicy,
  type IfcPresetName,
  type IfcTouched,
  type Sensitivity,
} from '../../src/engine/ifc';
import { repoRoot, yamlFilesUnder } from './helpers/repo';

const readRepo = (rel: string): string => fs.readFileSync(path.join(repoRoot(), rel), 'utf8');
const loadRepoYaml = <T = unknown>(rel: string): T => load(readRepo(rel), { filename: rel }) as T;

// ---- expected data: OpenParallax's IFC presets (sources, sinks, matrices), written out by hand ------------

const SINK_ORDER = ['external', 'exec', 'memory', 'workspace_write', 'workspace_read'] as const;
const V = { A: 'allow', B: 'block', E: 'escalate' } as const;
/** Rows in the order ext / exec / memory / ws_write / ws_read. */
const MATRICES: Record<IfcPresetName, Record<Sensitivity, string>> = {
  default: { public: 'AAAAA', internal: 'BAAAA', confidential: 'BAAAA', restricted: 'BEBEA', critical: 'BBBBB' },
  permissive: { public: 'AAAAA', internal: 'AAAAA', confidential: 'AAAAA', restricted: 'AAAAA', critical: 'BBBBB' },
  strict: { public: 'AAAAA', internal: 'BAAAA', confidential: 'BBEEA', restricted: 'BBBBA', critical: 'BBBBB' },
};
const expandMatrix = (m: Record<Sensitivity, string>) =>
  Object.fromEntries(
    Object.entries(m).map(([level, row]) => [level, Object.fromEntries(SINK_ORDER.map((s, i) => [s, V[row[i] as keyof typeof V]]))]),
  );

const SINKS = {
  external: ['http_request', 'send_email', 'send_message'],
  exec: ['execute_command'],
  memory: ['memory_write'],
  // OpenParallax's five plus Bulwark's copy_dir/move_dir (known action types that move data).
  workspace_write: ['write_file', 'create_directory', 'move_file', 'copy_file', 'delete_file', 'copy_dir', 'move_dir'],
  workspace_read: ['read_file', 'list_directory', 'search_files', 'memory_search', 'grep_files'],
};

// OpenParallax's `ssh_keys`, `system_security` and `openparallax_internals` each become two rules,
// because every criterion of a source must hold (OpenParallax OR-ed them by accident).
const CRITICAL_SOURCES = [
  'ssh_keys',
  'ssh_dir',
  'env_files',
  'credential_files',
  'credential_extensions',
  'cloud_config_dirs',
  'system_security',
  'system_security_dirs',
  'process_environment',
  'bulwark_internals',
  'bulwark_state_files',
];
const SOURCES: Record<IfcPresetName, string[]> = {
  default: [...CRITICAL_SOURCES, 'financial_documents', 'workspace_config', 'default'],
  permissive: [...CRITICAL_SOURCES, 'default'],
  strict: [...CRITICAL_SOURCES, 'financial_documents', 'medical_records', 'legal_documents', 'workspace_config', 'default'],
};

// ---- helpers --------------------------------------------------------------------------------------

const W = '/home/u/proj'; // a workspace
const touch = (t: Partial<IfcTouched> = {}): IfcTouched => ({
  reads: t.reads ?? [],
  writes: t.writes ?? [],
  ...(t.network ? { network: t.network } : {}),
});

/** Evaluates and, like the pipeline, commits the read taint when the action would run. */
function run(e: IfcEngine, session: string, type: string, t: Partial<IfcTouched> = {}, ran?: boolean): IfcDecision {
  const d = e.evaluate(session, type, touch(t));
  if (ran ?? d.decision === 'allow') e.commitRead(session, d.readTaint);
  return d;
}

class FaultyStore implements StateStore {
  readonly inner = new MemoryStateStore();
  failGet = false;
  failSet = false;
  get(ns: string, key: string): string | undefined {
    if (this.failGet) throw new Error('database is locked');
    return this.inner.get(ns, key);
  }
  set(ns: string, key: string, value: string): void {
    if (this.failSet) throw new Error('disk I/O error');
    this.inner.set(ns, key, value);
  }
  delete(ns: string, key: string): void {
    this.inner.delete(ns, key);
  }
}

/** Line (1-based) of the first line matching `re`, and the column (1-based) of `needle` in it. */
function where(text: string, re: RegExp, needle: string): { line: number; column: number } {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => re.test(l));
  assert.ok(i >= 0, `no line matches ${re}`);
  return { line: i + 1, column: lines[i]!.indexOf(needle) + 1 };
}

function policyError(text: string, file = 'custom.yaml'): IfcPolicyError {
  try {
    parseIfcPolicy(text, file);
  } catch (e) {
    assert.ok(e instanceof IfcPolicyError, String(e));
    return e;
  }
  assert.fail('policy was accepted');
}

const MINI = (sources: string): string => `mode: enforce
sources:
${sources}
sinks:
  external: [http_request, send_email]
  workspace_read: [read_file]
rules:
  public: { external: allow, workspace_read: allow }
  internal: { external: allow, workspace_read: allow }
  confidential: { external: block, workspace_read: allow }
  restricted: { external: block, workspace_read: allow }
  critical: { external: block, workspace_read: block }
`;

// ---- presets as data ------------------------------------------------------------------------------

describe('IFC presets', () => {
  const validate = new Ajv({ allErrors: true }).compile(JSON.parse(readRepo('security/ifc/schema.json')) as object);

  for (const name of IFC_PRESETS) {
    describe(`${name}.yaml`, () => {
      const file = `security/ifc/${name}.yaml`;
      const data = loadRepoYaml<Record<string, unknown>>(file);
      const policy = loadIfcPreset(name);

      it('is valid against security/ifc/schema.json and the engine validator', () => {
        assert.ok(validate(data), JSON.stringify(validate.errors, null, 1));
        assert.doesNotThrow(() => parseIfcPolicy(readRepo(file), file));
      });

      it('is what the bundle compiled in', () => {
        assert.deepEqual(policy.sources, data.sources);
        assert.deepEqual(policy.sinks, data.sinks);
        assert.deepEqual(policy.rules, data.rules);
        assert.equal(policy.mode, 'enforce');
        assert.equal(policy.origin, 'preset');
      });

      it("has the preset's decision matrix, exactly", () => {
        assert.deepEqual(policy.rules, expandMatrix(MATRICES[name]));
      });

      it("has OpenParallax's sinks (plus copy_dir/move_dir)", () => {
        assert.deepEqual(policy.sinks, SINKS);
      });

      it('has the source rules of its preset, in order', () => {
        assert.deepEqual(
          policy.sources.map((s) => s.name),
          SOURCES[name],
        );
        for (const s of policy.sources) {
          const want = CRITICAL_SOURCES.includes(s.name)
            ? 'critical'
            : s.name === 'workspace_config'
              ? 'confidential'
              : s.name === 'default'
                ? 'public'
                : 'restricted';
          assert.equal(s.sensitivity, want, s.name);
        }
        assert.ok(!policy.sources.some((s) => s.sensitivity === 'internal'), 'no preset assigns `internal` (reserved)');
      });

      for (const source of policy.sources) {
        it(`${source.name}: examples are classified by it, non-examples do not match it`, () => {
          assert.ok(source.examples, 'preset sources carry examples');
          assert.ok(source.examples.match.length > 0);
          if (Object.keys(source.match).length > 0) assert.ok(source.examples.no_match.length > 0);
          for (const p of source.examples.match)
            assert.deepEqual(classifyPath(policy, p), { sensitivity: source.sensitivity, source: source.name }, p);
          for (const p of source.examples.no_match) assert.equal(sourceMatches(source, p), false, `${source.name} should not match ${p}`);
        });
      }
    });
  }

  it('the permissive and strict presets share the critical sources of the default preset', () => {
    const crit = (n: IfcPresetName) => loadIfcPreset(n).sources.filter((s) => s.sensitivity === 'critical');
    assert.deepEqual(crit('permissive'), crit('default'));
    assert.deepEqual(crit('strict'), crit('default'));
  });

  it('the schema and the engine validator both refuse malformed policies', () => {
    const base = loadRepoYaml<Record<string, unknown>>('security/ifc/default.yaml');
    const clone = (): Record<string, any> => JSON.parse(JSON.stringify(base));
    const broken: [string, (p: Record<string, any>) => void][] = [
      [
        'bad mode',
        (p) => {
          p.mode = 'enforcing';
        },
      ],
      [
        'bad sensitivity',
        (p) => {
          p.sources[0].sensitivity = 'secret';
        },
      ],
      [
        'unknown criterion',
        (p) => {
          p.sources[0].match.basename_ni = ['x'];
        },
      ],
      [
        'empty criterion list',
        (p) => {
          p.sources[0].match.basename_in = [];
        },
      ],
      [
        'missing sensitivity row',
        (p) => {
          delete p.rules.internal;
        },
      ],
      [
        'bad decision',
        (p) => {
          p.rules.restricted.exec = 'ask';
        },
      ],
      [
        'unknown top-level key',
        (p) => {
          p.memory_block_levels = ['critical'];
        },
      ],
      [
        'missing sources',
        (p) => {
          delete p.sources;
        },
      ],
      [
        'bad sink category name',
        (p) => {
          p.sinks['Bad Name'] = ['x'];
        },
      ],
    ];
    for (const [what, mutate] of broken) {
      const p = clone();
      mutate(p);
      assert.equal(validate(p), false, `schema accepted: ${what}`);
      assert.throws(() => validateIfcPolicy(p, 'x.yaml'), IfcPolicyError, `engine accepted: ${what}`);
    }
    // Cross-references only the engine can check.
    const engineOnly: [string, (p: Record<string, any>) => void, RegExp][] = [
      [
        'action type in two sinks',
        (p) => {
          p.sinks.exec.push('send_email');
        },
        /send_email.*one sink/,
      ],
      [
        'incomplete matrix row',
        (p) => {
          delete p.rules.restricted.memory;
        },
        /no decision for sink `memory`/,
      ],
      [
        'rule for an unknown sink',
        (p) => {
          p.rules.public.network = 'allow';
        },
        /not a sink category/,
      ],
      [
        'catch-all before other sources',
        (p) => {
          p.sources.unshift({ name: 'everything', sensitivity: 'public', match: {} });
        },
        /can never match/,
      ],
      [
        'duplicate source name',
        (p) => {
          p.sources[1].name = p.sources[0].name;
        },
        /duplicate source name/,
      ],
      [
        'a sink named like an Object property, missing in the matrix',
        (p) => {
          p.sinks.constructor = ['x_tool'];
        },
        /no decision for sink `constructor`/,
      ],
    ];
    for (const [what, mutate, message] of engineOnly) {
      const p = clone();
      mutate(p);
      assert.throws(() => validateIfcPolicy(p, 'x.yaml'), message, what);
    }
  });
});

// ---- classification -----------------------------------------------------------------------------

describe('IFC classification', () => {
  const def = loadIfcPreset('default');
  const strict = loadIfcPreset('strict');
  const cls = (p: IfcPolicy, file: string) => classifyPath(p, file);

  it('every criterion given must match (OpenParallax OR-ed path_contains into basename_in)', () => {
    const p = parseIfcPolicy(
      MINI(`  - name: ssh_private_keys
    sensitivity: critical
    match: { basename_in: [id_rsa], path_contains: ["/.ssh/"] }
  - name: default
    sensitivity: public
    match: {}`),
      'mini.yaml',
    );
    assert.equal(cls(p, '/home/u/.ssh/id_rsa').source, 'ssh_private_keys');
    assert.equal(cls(p, '/home/u/backup/id_rsa').source, 'default', 'basename alone is not enough');
    assert.equal(cls(p, '/home/u/.ssh/config').source, 'default', 'path alone is not enough');
  });

  it('basename_not_in excludes, even with no other criterion', () => {
    const p = parseIfcPolicy(
      MINI(`  - name: env
    sensitivity: critical
    match: { basename_contains: [".env"], basename_not_in: [".env.example"] }
  - name: all_but_readme
    sensitivity: internal
    match: { basename_not_in: [readme.md] }`),
      'mini.yaml',
    );
    assert.equal(cls(p, '/w/.env.local').source, 'env');
    assert.equal(cls(p, '/w/.env.example').source, 'all_but_readme');
    assert.deepEqual(cls(p, '/w/README.md'), { sensitivity: 'public', source: UNCLASSIFIED }, 'no rule matched: public, unclassified');
  });

  it('the first matching source wins', () => {
    // /home/u/.aws/credentials is both credential_files and cloud_config_dirs; credential_files comes first.
    assert.equal(cls(def, '/home/u/.aws/credentials').source, 'credential_files');
    assert.equal(cls(def, '/home/u/.aws/config').source, 'cloud_config_dirs');
  });

  it("OpenParallax's matcher defects are fixed: /.bulwark/ internals and /.ssh/ are matched as named", () => {
    assert.deepEqual(cls(def, `${W}/.bulwark/approvals.json`), { sensitivity: 'critical', source: 'bulwark_internals' });
    assert.deepEqual(cls(def, '/home/u/.ssh/config'), { sensitivity: 'critical', source: 'ssh_dir' });
    assert.deepEqual(cls(def, '/home/u/.ssh'), { sensitivity: 'critical', source: 'ssh_dir' }, 'listing the directory itself');
    assert.deepEqual(cls(def, '/srv/keys/id_ed25519'), { sensitivity: 'critical', source: 'ssh_keys' }, 'private key names anywhere');
    assert.deepEqual(cls(def, '/var/lib/bulwark/bulwark.db'), { sensitivity: 'critical', source: 'bulwark_state_files' });
  });

  it('compares in lower case and sees through spelling tricks', () => {
    for (const p of [
      `${W}/.ENV`,
      `${W}/.env.`,
      `${W}/.env `,
      `${W}/src/../.env`,
      `${W}//.env`,
      `${W}/./.env`,
      'C:\\Users\\u\\proj\\.env',
      'C:/Users/u/proj/.env::$DATA',
      `${W}/.env/`,
    ]) {
      assert.deepEqual(cls(def, p), { sensitivity: 'critical', source: 'env_files' }, p);
    }
    assert.equal(cls(def, 'C:\\Users\\u\\.SSH\\id_rsa').sensitivity, 'critical');
    assert.equal(cls(def, '/ETC/Shadow').source, 'system_security');
    assert.equal(cls(def, '.ssh/config').source, 'ssh_dir', 'a relative path is still classified');
  });

  it('document rules do not classify source code by a word inside its name', () => {
    // OpenParallax's substring match made syntax.ts "financial" (tax) and calendar.tsx "legal" (nda);
    // the presets add a document/data-file suffix criterion so the rules mean what their names say.
    assert.equal(cls(def, `${W}/src/syntax.ts`).sensitivity, 'public');
    assert.equal(cls(def, `${W}/src/classnames.js`).sensitivity, 'public');
    assert.equal(cls(strict, `${W}/src/calendar.tsx`).sensitivity, 'public');
    assert.equal(cls(strict, `${W}/src/graphics.py`).sensitivity, 'public');
    assert.deepEqual(cls(def, '/home/u/Documents/Tax-Return-2023.PDF'), { sensitivity: 'restricted', source: 'financial_documents' });
    assert.deepEqual(cls(strict, '/home/u/clinic/patient-intake-2024.pdf'), { sensitivity: 'restricted', source: 'medical_records' });
  });

  it('sinkOf maps each action type to its category; a type the policy does not name has none (the engine then asks the action table)', () => {
    assert.equal(sinkOf(def, 'send_email'), 'external');
    assert.equal(sinkOf(def, 'memory_write'), 'memory');
    assert.equal(sinkOf(def, 'memory_search'), 'workspace_read');
    assert.equal(sinkOf(def, 'mcp__github__create_issue'), undefined);
    assert.equal(sinkOf(def, 'SEND_EMAIL'), undefined, 'action types are exact names');
  });
});

// ---- worked flows: read, then send -----------------------------------------------------------------

describe('IFC: worked flows', () => {
  it('Example 1: read .env, then email it → block', () => {
    const e = new IfcEngine(loadIfcPreset('default'), new MemoryStateStore());
    const read = run(e, 's1', 'read_file', { reads: [`${W}/.env`] });
    assert.equal(read.decision, 'block', 'IFC itself blocks reading a critical file (critical → workspace_read)');
    assert.equal(read.rule, 'ifc.critical.workspace_read');
    assert.deepEqual(read.classified, [{ path: `${W}/.env`, access: 'read', sensitivity: 'critical', source: 'env_files' }]);
    assert.equal(e.taintOf('s1'), 'public', 'a blocked read did not happen: no taint');
    assert.equal(run(e, 's1', 'send_email').decision, 'allow');

    // "Even if the read somehow succeeded": the pipeline reports it ran.
    e.commitRead('s1', read.readTaint);
    assert.equal(e.taintOf('s1'), 'critical');
    const send = run(e, 's1', 'send_email');
    assert.equal(send.decision, 'block');
    assert.equal(send.rule, 'ifc.critical.external');
    assert.equal(send.sink, 'external');
    assert.equal(send.sensitivity, 'critical');
    assert.equal(
      send.reason,
      `Blocked by IFC: the session has read critical data (${W}/.env, rule env_files); send_email is an external sink, and critical → external is block in the default policy`,
    );
  });

  it('Example 2: a Go test helper that mentions DROP TABLE → allow (path, not content)', () => {
    const e = new IfcEngine(loadIfcPreset('default'), new MemoryStateStore());
    const d = run(e, 's2', 'write_file', { writes: [`${W}/testhelpers/db.go`] });
    assert.equal(d.decision, 'allow');
    assert.equal(d.rule, 'ifc.public.workspace_write');
    assert.deepEqual(
      d.classified.map((c) => [c.sensitivity, c.source]),
      [['public', 'default']],
    );
  });

  it('Example 3: patient intake form, then write the report → strict: block', () => {
    const e = new IfcEngine(loadIfcPreset('strict'), new MemoryStateStore());
    const read = run(e, 's3', 'read_file', { reads: ['/home/u/clinic/patient-intake-2024.pdf'] });
    assert.equal(read.decision, 'allow', 'restricted → workspace_read is allow');
    assert.equal(read.classified[0]!.source, 'medical_records');
    assert.equal(e.taintOf('s3'), 'restricted');
    const write = run(e, 's3', 'write_file', { writes: [`${W}/report.md`] });
    assert.equal(write.decision, 'block');
    assert.equal(write.rule, 'ifc.restricted.workspace_write');
  });

  it('Example 3 with the default preset: the patient form is public there; the escalate path needs restricted data', () => {
    // One might expect "restricted" here as with the strict preset, but the default preset has no
    // medical_records source (only strict has it), and the name matches no financial keyword. So the
    // default preset classifies the form as public and the report is written without a question.
    // The escalate path is real for restricted data the default preset does know: a financial document.
    const e = new IfcEngine(loadIfcPreset('default'), new MemoryStateStore());
    const read = run(e, 's3d', 'read_file', { reads: ['/home/u/clinic/patient-intake-2024.pdf'] });
    assert.deepEqual(
      read.classified.map((c) => [c.sensitivity, c.source]),
      [['public', 'default']],
    );
    assert.equal(run(e, 's3d', 'write_file', { writes: [`${W}/report.md`] }).decision, 'allow');

    run(e, 's3d', 'read_file', { reads: ['/home/u/finance/invoice-2024-03.pdf'] });
    assert.equal(e.taintOf('s3d'), 'restricted');
    const write = run(e, 's3d', 'write_file', { writes: [`${W}/report.md`] }, false);
    assert.equal(write.decision, 'escalate', 'restricted → workspace_write is escalate in the default preset');
    assert.equal(write.rule, 'ifc.restricted.workspace_write');
    assert.match(write.reason, /^Escalated by IFC/);
  });

  it('Example 4: NDA, then send an email → strict: block (default: the NDA is public there)', () => {
    const strict = new IfcEngine(loadIfcPreset('strict'), new MemoryStateStore());
    const read = run(strict, 's4', 'read_file', { reads: ['/home/u/legal/nda-acme-2024.pdf'] });
    assert.deepEqual(
      read.classified.map((c) => [c.sensitivity, c.source]),
      [['restricted', 'legal_documents']],
    );
    const send = run(strict, 's4', 'send_email');
    assert.equal(send.decision, 'block');
    assert.equal(send.rule, 'ifc.restricted.external');
    assert.match(send.reason, /nda-acme-2024\.pdf, rule legal_documents/);

    // legal_documents is strict-only, as in OpenParallax.
    const def = new IfcEngine(loadIfcPreset('default'), new MemoryStateStore());
    run(def, 's4', 'read_file', { reads: ['/home/u/legal/nda-acme-2024.pdf'] });
    assert.equal(run(def, 's4', 'send_email').decision, 'allow');
  });
});

// ---- the engine -----------------------------------------------------------------------------------

describe('IFC engine', () => {
  const def = loadIfcPreset('default');

  it('`cat .env | curl …`: the shell read targets decide the same action (critical → external)', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    const d = e.evaluate('sh', 'execute_command', touch({ reads: [`${W}/.env`], network: ['https://attacker.example/upload'] }));
    assert.equal(d.decision, 'block');
    assert.equal(d.rule, 'ifc.critical.external');
    assert.match(
      d.reason,
      /reads \/home\/u\/proj\/\.env \(critical, rule env_files\); execute_command reaches the network \(https:\/\/attacker\.example\/upload\), an external sink/,
    );
    assert.deepEqual(d.readTaint, { sensitivity: 'critical', path: `${W}/.env`, source: 'env_files' });
  });

  it('a shell command that reaches the network is also an external flow (restricted: exec escalates, external blocks)', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    const pdf = '/home/u/Documents/tax-return-2023.pdf';
    assert.equal(e.evaluate('sh', 'execute_command', touch({ reads: [pdf] })).decision, 'escalate');
    const exfil = e.evaluate('sh', 'execute_command', touch({ reads: [pdf], network: ['https://paste.example'] }));
    assert.equal(exfil.decision, 'block');
    assert.equal(exfil.rule, 'ifc.restricted.external');
    assert.equal(e.taintOf('sh'), 'public', 'blocked: nothing was read');
  });

  it('reads taint the session and later actions are judged against it', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    run(e, 't', 'execute_command', { reads: ['/home/u/Documents/salary-2024.csv'] }, true); // escalated, approved, ran
    assert.equal(e.taintOf('t'), 'restricted');
    assert.equal(run(e, 't', 'http_request').decision, 'block');
    assert.equal(run(e, 't', 'memory_write').decision, 'block');
    assert.equal(run(e, 't', 'execute_command', {}, false).decision, 'escalate');
    assert.equal(run(e, 't', 'read_file', { reads: [`${W}/README.md`] }).decision, 'allow');
  });

  it('writing into a sensitive file is a flow into that file', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    const d = run(e, 'w', 'write_file', { writes: [`${W}/.env`] });
    assert.equal(d.decision, 'block');
    assert.equal(d.rule, 'ifc.critical.workspace_write');
    assert.match(d.reason, /the action writes \/home\/u\/proj\/\.env \(critical, rule env_files\)/);
    assert.equal(d.readTaint.sensitivity, 'public', 'writing does not taint');
  });

  it('taint only rises', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    assert.equal(e.commitRead('r', 'restricted'), 'restricted');
    assert.equal(e.commitRead('r', 'public'), 'restricted');
    assert.equal(e.commitRead('r', { sensitivity: 'confidential', path: `${W}/SOUL.md`, source: 'workspace_config' }), 'restricted');
    run(e, 'r', 'read_file', { reads: [`${W}/config.yaml`] });
    assert.equal(e.taintOf('r'), 'restricted');
    assert.equal(e.commitRead('r', 'critical'), 'critical');
    assert.equal(e.commitRead('r', 'internal'), 'critical');
    assert.throws(() => e.commitRead('r', 'secret' as Sensitivity), TypeError);
  });

  it('taint survives a restart: a new engine on the same store sees it', () => {
    const store = new MemoryStateStore();
    const first = new IfcEngine(def, store);
    run(first, 'persist', 'read_file', { reads: ['/home/u/Documents/payslip-2024-05.pdf'] });
    assert.equal(first.taintOf('persist'), 'restricted');
    assert.ok(store.get(IFC_TAINT_NAMESPACE, 'persist'), 'stored under ifc.taint');

    const second = new IfcEngine(def, store);
    assert.equal(second.taintOf('persist'), 'restricted');
    const d = second.evaluate('persist', 'send_message', touch());
    assert.equal(d.decision, 'block');
    assert.match(d.reason, /the session has read restricted data \(\/home\/u\/Documents\/payslip-2024-05\.pdf, rule financial_documents\)/);
  });

  it('sessions are independent', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    e.commitRead('a', 'critical');
    assert.equal(e.taintOf('a'), 'critical');
    assert.equal(e.taintOf('b'), 'public');
    assert.equal(run(e, 'b', 'send_email').decision, 'allow');
    assert.equal(run(e, 'a', 'send_email').decision, 'block');
  });

  it('an unknown action type is a possible external sink: allowed while the session is clean, blocked once it is tainted', () => {
    const e = new IfcEngine(def, new MemoryStateStore());
    const clean = run(e, 'u', 'mcp__slack__post_message', {}, false);
    assert.deepEqual([clean.decision, clean.rule, clean.sink], ['allow', 'ifc.public.external', 'external']);
    e.commitRead('u', 'critical');
    const d = run(e, 'u', 'mcp__slack__post_message', { reads: [`${W}/.env`] }, false);
    assert.equal(d.decision, 'block');
    assert.equal(d.rule, 'ifc.critical.external');
    assert.equal(d.sink, 'external');
    assert.equal(d.sensitivity, 'critical');
    assert.match(d.reason, /mcp__slack__post_message is a tool Bulwark does not know, so it may send data out/);
  });

  describe('audit mode', () => {
    it('lets a block pass and records what it would have blocked', () => {
      const e = new IfcEngine(def, new MemoryStateStore(), { modeOverride: 'audit' });
      e.commitRead('a', { sensitivity: 'critical', path: `${W}/.env`, source: 'env_files' });
      const d = e.evaluate('a', 'send_email', touch());
      assert.deepEqual([d.decision, d.enforced, d.wouldBlock, d.rule], ['allow', false, true, 'ifc.critical.external']);
      assert.match(d.reason, /^Allowed in IFC audit mode, would be blocked: the session has read critical data/);
    });

    it('keeps an escalation: it is routed before execution in both modes', () => {
      const e = new IfcEngine(def, new MemoryStateStore(), { modeOverride: 'audit' });
      e.commitRead('a', 'restricted');
      const d = e.evaluate('a', 'write_file', touch({ writes: [`${W}/out.md`] }));
      assert.deepEqual([d.decision, d.enforced, d.wouldBlock], ['escalate', false, false]);
    });

    it('allows look the same in both modes apart from `enforced`', () => {
      const d = new IfcEngine(def, new MemoryStateStore(), { modeOverride: 'audit' }).evaluate(
        'a',
        'read_file',
        touch({ reads: [`${W}/a.ts`] }),
      );
      assert.deepEqual([d.decision, d.enforced, d.wouldBlock], ['allow', false, false]);
    });

    it("the policy file's mode applies unless the setting overrides it", () => {
      const text = readRepo('security/ifc/default.yaml').replace(/^mode: enforce$/m, 'mode: audit');
      const policy = parseIfcPolicy(text, 'audit.yaml');
      assert.equal(policy.mode, 'audit');
      const audit = new IfcEngine(policy, new MemoryStateStore());
      const enforce = new IfcEngine(policy, new MemoryStateStore(), { modeOverride: 'enforce' });
      const auditOfPreset = new IfcEngine(def, new MemoryStateStore(), { modeOverride: 'audit' as IfcMode });
      for (const e of [audit, enforce, auditOfPreset]) e.commitRead('m', 'critical');
      assert.equal(audit.mode, 'audit');
      assert.equal(audit.evaluate('m', 'http_request', touch()).decision, 'allow');
      assert.equal(enforce.mode, 'enforce');
      assert.equal(enforce.evaluate('m', 'http_request', touch()).decision, 'block');
      assert.match(enforce.evaluate('m', 'http_request', touch()).reason, /in the IFC policy audit\.yaml$/);
      assert.equal(auditOfPreset.evaluate('m', 'http_request', touch()).decision, 'allow');
    });
  });

  describe('fail-closed', () => {
    it('a store that cannot be read blocks, in audit mode too', () => {
      const store = new FaultyStore();
      for (const e of [new IfcEngine(def, store), new IfcEngine(def, store, { modeOverride: 'audit' })]) {
        store.failGet = true;
        const d = e.evaluate('f', 'read_file', touch({ reads: [`${W}/README.md`] }));
        assert.deepEqual([d.decision, d.enforced, d.wouldBlock, d.rule], ['block', true, true, 'ifc.store_error']);
        assert.match(d.reason, /could not be read from the state store \(reading the session taint failed: database is locked\)/);
        assert.throws(() => e.taintOf('f'), IfcStoreError);
        store.failGet = false;
        assert.equal(e.evaluate('f', 'read_file', touch({ reads: [`${W}/README.md`] })).decision, 'allow');
      }
    });

    it('a store that cannot be written: commitRead throws, and this engine still judges by the raised taint', () => {
      const store = new FaultyStore();
      const e = new IfcEngine(def, store);
      store.failSet = true;
      assert.throws(() => e.commitRead('f', 'critical'), /writing the session taint failed: disk I\/O error/);
      assert.equal(e.taintOf('f'), 'critical');
      assert.equal(e.evaluate('f', 'send_email', touch()).decision, 'block');
      store.failSet = false;
      assert.equal(e.commitRead('f', 'public'), 'critical', 'the next commit writes the kept taint through');
      assert.equal(new IfcEngine(def, store).taintOf('f'), 'critical');
    });

    it('a corrupt stored taint blocks', () => {
      const store = new MemoryStateStore();
      for (const bad of ['{not json', '{"sensitivity":"secret"}', '"critical"', 'null']) {
        store.set(IFC_TAINT_NAMESPACE, 'c', bad);
        const d = new IfcEngine(def, store).evaluate('c', 'read_file', touch());
        assert.equal(d.decision, 'block', bad);
        assert.equal(d.rule, 'ifc.store_error');
      }
    });

    it('malformed input blocks instead of throwing', () => {
      const e = new IfcEngine(def, new MemoryStateStore());
      const d = e.evaluate('x', 'read_file', { reads: [42 as unknown as string], writes: [] });
      assert.equal(d.decision, 'block');
      assert.equal(d.rule, 'ifc.error');
      const d2 = e.evaluate('x', 'read_file', {} as IfcTouched);
      assert.equal(d2.decision, 'block');
    });
  });
});

// ---- policy files -----------------------------------------------------------------------------------

describe('IFC policy files', () => {
  const text = readRepo('security/ifc/default.yaml');

  it('a YAML syntax error carries the file, line and column', () => {
    const e = policyError('mode: enforce\nsources:\n  - name: x\n   sensitivity: critical\n', '/ws/.bulwark-ifc.yaml');
    assert.equal(e.file, '/ws/.bulwark-ifc.yaml');
    assert.deepEqual([e.line, e.column], [4, 4]);
    assert.match(e.message, /^\/ws\/\.bulwark-ifc\.yaml:4:4: YAML syntax error: bad indentation/);
    const dup = policyError('mode: enforce\nmode: audit\n');
    assert.deepEqual([dup.line, dup.column], [2, 1]);
    assert.match(dup.message, /duplicated mapping key/);
    assert.deepEqual([policyError('').line, policyError('').column], [1, 1]);
  });

  it('a bad sensitivity value points at the value', () => {
    const broken = text.replace(/(name: env_files\n\s+)sensitivity: critical/, '$1sensitivity: secret');
    const e = policyError(broken);
    assert.deepEqual({ line: e.line, column: e.column }, where(broken, /sensitivity: secret/, 'secret'));
    assert.match(e.message, /^custom\.yaml:\d+:\d+: source `env_files`: sensitivity `secret` is not one of `public`/);
    assert.deepEqual(e.problems[0]!.path, ['sources', 2, 'sensitivity']);
  });

  it('an unknown match criterion points at the key (a typo must not turn a rule into a catch-all)', () => {
    const broken = text.replace('      basename_suffix_in: [".pem"', '      basename_sufix_in: [".pem"');
    const e = policyError(broken);
    assert.deepEqual({ line: e.line, column: e.column }, where(broken, /basename_sufix_in/, 'basename_sufix_in'));
    assert.match(e.message, /unknown key `basename_sufix_in`/);
  });

  it('a bad decision inside a flow-style matrix row points at the cell', () => {
    const broken = text.replace(/(restricted: +\{ external: block, exec: )escalate/, '$1ask');
    const e = policyError(broken);
    assert.deepEqual({ line: e.line, column: e.column }, where(broken, /^ {2}restricted:/, 'ask'));
    assert.match(e.message, /rules\.restricted\.exec: `ask` is not one of `allow`, `block`, `escalate`/);
  });

  it('a duplicated action type points at its second occurrence', () => {
    const broken = text.replace('exec: [execute_command]', 'exec: [execute_command, send_email]');
    const e = policyError(broken);
    assert.deepEqual({ line: e.line, column: e.column }, where(broken, /exec: \[execute_command, send_email\]/, 'send_email'));
  });

  it('block-style documents are located too, and every problem is reported', () => {
    const doc = [
      'mode: enforce',
      'sources:',
      '- name: keys',
      '  sensitivity: critical',
      '  match:',
      '    basename_in:',
      '      - id_rsa',
      '      - 7',
      '- name: all',
      '  sensitivity: Public',
      '  match: {}',
      'sinks:',
      '  external:',
      '    - http_request',
      'rules:',
      '  public: { external: allow }',
      '  internal: { external: allow }',
      '  confidential: { external: allow }',
      '  restricted: { external: allow }',
      '  critical:',
      '    external: maybe',
    ].join('\n');
    const e = policyError(doc);
    const at = Object.fromEntries(e.problems.map((p) => [p.path.join('.'), [p.line, p.column]]));
    assert.deepEqual(at['sources.0.match.basename_in.1'], [8, 9]);
    assert.deepEqual(at['sources.1.sensitivity'], [10, 16]);
    assert.deepEqual(at['rules.critical.external'], [21, 15]);
    assert.equal(e.line, 8);
    assert.match(e.message, /and 2 more problems/);
  });

  it('a policy missing a section or with a wrong type is refused, not half-loaded', () => {
    assert.match(policyError('mode: enforce\n').message, /missing `sources`/);
    assert.match(policyError('- just\n- a list\n').message, /must be a mapping/);
    assert.match(policyError(MINI('  - name: x\n    sensitivity: public\n    match: []')).message, /`match` must be a mapping/);
  });

  it('a valid custom policy loads and is used by name in reasons', () => {
    const custom = MINI(`  - name: client_data
    sensitivity: restricted
    match: { path_contains: ["/client-records/"] }
  - name: default
    sensitivity: public
    match: {}`);
    const p = parseIfcPolicy(custom, '/ws/ifc.yaml');
    assert.equal(p.origin, 'file');
    const e = new IfcEngine(p, new MemoryStateStore());
    run(e, 'c', 'read_file', { reads: ['/srv/client-records/acme.txt'] });
    const d = e.evaluate('c', 'http_request', touch());
    assert.equal(d.decision, 'block');
    assert.match(d.reason, /restricted → external is block in the IFC policy \/ws\/ifc\.yaml$/);
    assert.equal(e.evaluate('c', 'execute_command', touch()).rule, 'ifc.no_sink', 'this policy has no exec sink');
  });
});

// ---- the flow corpus (test/cases/ifc/*.yaml) --------------------------------------------------------

interface FlowStep {
  action: string;
  reads?: string[];
  writes?: string[];
  network?: string[];
  /** Commit the read taint afterwards (default: when IFC allowed it). */
  ran?: boolean;
  expect: { decision: string; rule?: string; sensitivity?: Sensitivity; would_block?: boolean; reason?: string; taint_after?: Sensitivity };
}
interface FlowCase {
  name: string;
  preset: IfcPresetName;
  mode?: IfcMode;
  steps: FlowStep[];
}

describe('IFC flow corpus (test/cases/ifc)', () => {
  const files = yamlFilesUnder('test/cases/ifc');
  it('has cases with unique names', () => {
    const names = files.flatMap((f) => loadRepoYaml<FlowCase[]>(f).map((c) => c.name));
    assert.ok(names.length >= 20, `only ${names.length} cases`);
    assert.equal(new Set(names).size, names.length);
  });
  for (const file of files) {
    describe(path.basename(file), () => {
      for (const c of loadRepoYaml<FlowCase[]>(file)) {
        it(c.name, () => {
          const e = new IfcEngine(loadIfcPreset(c.preset), new MemoryStateStore(), c.mode ? { modeOverride: c.mode } : {});
          c.steps.forEach((s, i) => {
            const at = `step ${i + 1} (${s.action})`;
            assert.ok(
              typeof s.expect.rule === 'string' && s.expect.rule.length > 0,
              `${at}: the step names no rule: add \`expect.rule\` (every IFC decision carries one)`,
            );
            const d = run(e, 'corpus', s.action, { reads: s.reads, writes: s.writes, network: s.network }, s.ran);
            assert.equal(d.decision, s.expect.decision, `${at}: ${d.reason}`);
            assert.equal(d.rule, s.expect.rule, at);
            if (s.expect.sensitivity) assert.equal(d.sensitivity, s.expect.sensitivity, at);
            if (s.expect.would_block !== undefined) assert.equal(d.wouldBlock, s.expect.would_block, at);
            if (s.expect.reason) assert.ok(d.reason.includes(s.expect.reason), `${at}: reason "${d.reason}" lacks "${s.expect.reason}"`);
            if (s.expect.taint_after) assert.equal(e.taintOf('corpus'), s.expect.taint_after, `${at}: taint`);
          });
        });
      }
    });
  }
});
