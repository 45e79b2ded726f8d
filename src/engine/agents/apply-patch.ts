// The apply_patch format of Codex (and of VS Code's apply_patch tool): which files a patch adds,
// updates, moves or deletes, and the text it adds to each. Only what the engine needs to decide:
// the paths and the new text, not the application of hunks.
import type { MappedAction } from './tool-map';

export type ParsedPatch = { readonly ok: true; readonly operations: MappedAction[] } | { readonly ok: false; readonly error: string };

const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/;

export function parseApplyPatch(text: string): ParsedPatch {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  if (lines[i]?.trim() !== '*** Begin Patch') return { ok: false, error: 'it does not start with "*** Begin Patch"' };
  i++;
  const ops: MappedAction[] = [];
  let current: { kind: 'add' | 'update'; path: string; moveTo?: string; added: string[] } | undefined;
  const finish = () => {
    if (!current) return;
    const content = current.added.join('\n');
    if (current.moveTo !== undefined) {
      ops.push({ type: 'move_file', payload: { source: current.path, destination: current.moveTo } });
      ops.push({ type: 'write_file', payload: { path: current.moveTo, content } });
    } else {
      ops.push({ type: 'write_file', payload: { path: current.path, content } });
    }
    current = undefined;
  };
  let ended = false;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '*** End Patch') {
      ended = true;
      break;
    }
    const h = HEADER.exec(line);
    if (h) {
      const [, kind, rawPath] = h;
      const path = rawPath!.trim();
      if (path === '') return { ok: false, error: `line ${i + 1} names no file` };
      if (kind === 'Move to') {
        if (!current || current.kind !== 'update') return { ok: false, error: `line ${i + 1}: "Move to" outside an "Update File"` };
        current.moveTo = path;
        continue;
      }
      finish();
      if (kind === 'Delete File') ops.push({ type: 'delete_file', payload: { path } });
      else current = { kind: kind === 'Add File' ? 'add' : 'update', path, added: [] };
      continue;
    }
    if (line.startsWith('*** ') && line.trim() !== '*** End of File')
      return { ok: false, error: `line ${i + 1} is not a patch line (${line.slice(0, 60)})` };
    if (!current) {
      if (line.trim() === '') continue;
      return { ok: false, error: `line ${i + 1} is outside any file section` };
    }
    if (line.startsWith('+')) current.added.push(line.slice(1));
  }
  if (!ended) return { ok: false, error: 'it does not end with "*** End Patch"' };
  finish();
  if (ops.length === 0) return { ok: false, error: 'it changes no file' };
  return { ok: true, operations: ops };
}
