// Bulwark's durable state store (src/node/state-store.ts) on real SQLite: a database that cannot be
// opened gives a store that fails every call; the extension host keeps one store per state folder.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FailingStateStore, STATE_FILE, StateStores, openStateStore } from '../../src/node/state-store';
import { makeTempDir, repoRoot } from './helpers/repo';

describe('state store', () => {
  it('a corrupt state file gives a store that fails every call (fail closed), with the reason', () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, STATE_FILE), '{ not json');
    const r = openStateStore(dir);
    assert.ok(r.store instanceof FailingStateStore);
    assert.match(r.error!, /bulwark\.db/);
    assert.throws(() => r.store.get('a', 'b'));
    const ok = openStateStore(makeTempDir());
    assert.equal(ok.durable, true);
    assert.equal(openStateStore(undefined).durable, false);
  });
});

describe('state stores: one owner per state folder', () => {
  it('every user of a folder gets the same SQLite store, so what one records the other reads; another folder has its own', () => {
    const stores = new StateStores();
    const dir = makeTempDir();
    const engineSide = stores.storeFor(dir);
    const fileToolsSide = stores.storeFor(dir);
    assert.equal(engineSide.durable, true);
    assert.equal(fileToolsSide.store, engineSide.store);
    engineSide.store.set('ifc.taint', 's1', 'secret');
    assert.equal(fileToolsSide.store.get('ifc.taint', 's1'), 'secret');
    const other = stores.storeFor(makeTempDir());
    assert.notEqual(other.store, engineSide.store);
    assert.equal(other.store.get('ifc.taint', 's1'), undefined);
  });

  it('a database that failed to open blocks with its reason, and is opened again on the next call once repaired', () => {
    const stores = new StateStores();
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, STATE_FILE), '{ not a database');
    const failed = stores.storeFor(dir);
    assert.ok(failed.store instanceof FailingStateStore);
    assert.match(failed.error!, /bulwark\.db/);
    assert.throws(
      () => failed.store.set('a', 'b', 'c'),
      (e: Error) => e.message === failed.error,
    );
    assert.ok(stores.storeFor(dir).store instanceof FailingStateStore, 'still broken: still refused');
    fs.rmSync(path.join(dir, STATE_FILE));
    const repaired = stores.storeFor(dir);
    assert.equal(repaired.durable, true);
    repaired.store.set('a', 'b', 'c');
    assert.equal(stores.storeFor(dir).store, repaired.store);
  });

  it('without a state folder the in-memory store is kept (its state lasts until the host stops), with its warning', () => {
    const stores = new StateStores();
    const first = stores.storeFor(undefined);
    assert.equal(first.durable, false);
    assert.match(first.error!, /until VS Code restarts/);
    first.store.set('patch.redacted_reads', 'f', '{}');
    assert.equal(stores.storeFor(undefined).store.get('patch.redacted_reads', 'f'), '{}');
  });

  it('in the extension host only the engine host opens the state store; the file tools take its store', () => {
    const src = path.join(repoRoot(), 'src');
    const files = (function walk(d: string): string[] {
      return fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : e.name.endsWith('.ts') ? [path.join(d, e.name)] : []));
    })(src);
    const calling = (re: RegExp) =>
      files.filter((f) => re.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(src, f).split(path.sep).join('/'));
    assert.deepEqual(calling(/\bopenStateStore\(/), ['node/state-store.ts']);
    assert.deepEqual(calling(/\bnew StateStores\(/), ['vscode/engine-host.ts']);
    const fileTools = fs.readFileSync(path.join(src, 'vscode', 'file-tools.ts'), 'utf8');
    assert.match(fileTools, /store: host\.stateStore\(\)/);
  });
});
