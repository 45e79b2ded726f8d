// The files a unified, context or git diff names, for `git apply`, `patch` and friends: read from
// the patch text (through the file-system port, or a heredoc), so the analysis reports the files a
// patch writes instead of "somewhere below the working directory". Deliberately a superset: every
// header line counts (a removed line that looks like `--- x` adds a name, it never hides one).

/** Most files one patch may name and still be reported one by one. */
export const MAX_PATCH_FILES = 1000;

export interface PatchFiles {
  /** Names as written in the patch (before stripping), of files created or changed. */
  readonly writes: readonly string[];
  /** Names of files the patch removes (`deleted file mode`, `+++ /dev/null`). */
  readonly deletes: readonly string[];
}

/** Headers that name a file: unified (`---`/`+++`), context (`***`), git (`diff --git`, renames, copies), svn (`Index:`). */
const NAME_LINE = /^(?:(---|\+\+\+|\*\*\*) (.+?)(?:\t.*)?|(rename from|rename to|copy from|copy to|Index:) (.+)|diff --git (.+))$/;

/** The files a patch text names; undefined when it names too many to report. */
export function filesOfPatch(text: string): PatchFiles | undefined {
  const writes = new Set<string>();
  const deletes = new Set<string>();
  let deleting = false;
  let lastOld: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^deleted file mode /.test(line)) {
      deleting = true;
      continue;
    }
    const m = NAME_LINE.exec(line);
    if (!m) continue;
    if (m[5] !== undefined) {
      // A new file section: `diff --git a/x b/y` (names may be quoted; with spaces the split is ambiguous, so both halves count).
      deleting = false;
      for (const n of gitDiffNames(m[5])) writes.add(n);
    } else if (m[1] !== undefined) {
      const name = unquote(m[2]!.trim());
      if (name === '/dev/null') {
        if (m[1] === '+++' && lastOld !== undefined) {
          deletes.add(lastOld);
          writes.delete(lastOld);
        }
        continue;
      }
      if (m[1] === '---' || m[1] === '***') lastOld = name;
      if (deleting && (m[1] === '---' || m[1] === '***')) deletes.add(name);
      else writes.add(name);
    } else {
      const name = unquote(m[4]!.trim());
      if (m[3] === 'rename from') deletes.add(name);
      else if (m[3] !== 'copy from') writes.add(name);
    }
    if (writes.size + deletes.size > MAX_PATCH_FILES) return undefined;
  }
  for (const d of deletes) writes.delete(d);
  return { writes: [...writes], deletes: [...deletes] };
}

/** `a/x b/y`, `"a/x y" "b/x y"`: the two names (every split point of an unquoted line with spaces). */
function gitDiffNames(rest: string): string[] {
  const quoted = /^"((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"$/.exec(rest);
  if (quoted) return [unquote(`"${quoted[1]}"`), unquote(`"${quoted[2]}"`)];
  const parts = rest.split(' ');
  if (parts.length === 2) return parts;
  // `a/my file b/my file`: every split point gives a candidate pair.
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join(' '), parts.slice(i).join(' '));
  return out;
}

/** git quotes names with unusual characters C-style: `"a/\303\251.txt"`. */
function unquote(name: string): string {
  if (!(name.length >= 2 && name.startsWith('"') && name.endsWith('"'))) return name;
  const body = name.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      bytes.push(...new TextEncoder().encode(c));
      continue;
    }
    const n = body[++i]!;
    if (/[0-7]/.test(n)) {
      const oct = body.slice(i, i + 3);
      bytes.push(parseInt(oct, 8) & 0xff);
      i += oct.length - 1;
    } else bytes.push(({ n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11 } as Record<string, number>)[n] ?? n.charCodeAt(0));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * The paths a name stands for after `-pN` (N leading components removed; a name with fewer is
 * skipped by patch). Without N (GNU patch guesses) every level counts, down to the base name.
 */
export function stripped(name: string, strip: number | undefined): string[] {
  const comps = name.split('/').filter((c, i) => c !== '' || i === 0);
  const abs = name.startsWith('/');
  const parts = abs ? comps.slice(1) : comps;
  if (strip !== undefined) {
    if (strip === 0) return [name];
    return parts.length > strip ? [parts.slice(strip).join('/')] : [];
  }
  const out = [name];
  for (let k = 1; k < parts.length; k++) out.push(parts.slice(k).join('/'));
  return out;
}
