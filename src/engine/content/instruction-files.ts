// Invisible text written into an agent instruction file (CLAUDE.md, AGENTS.md, .cursorrules,
// copilot-instructions.md …) is blocked outright: agents read those files as instructions, people
// review them by eye, and hidden characters are exactly the gap between the two (the "rules file
// backdoor"). The protection table already knows these files (security/protection/editor.yaml,
// rule editor.agent_instructions, level escalate_tier2); at that level only Tier 2 would look at
// the content, and Tier 1's always-block rules cover tag characters only — bidi controls and
// zero-width characters would reach a model that cannot see them either. So the engine checks
// here, right after protection, independent of any policy or model.
import { FIELD_CLASS_OF_KEY } from '../heuristics/evaluate';
import { isAscii } from '../heuristics/prefilter';
import type { FileSystemPort } from '../ports';
import { loadContentRules, matchSpansIn, type CompiledContentRule } from './rules';

/**
 * Protection rules (security/protection/*.yaml) whose files agents read as instructions or as
 * their own context: editor instruction files (CLAUDE.md, .cursorrules, *.prompt.md …), the
 * workspace's AGENTS.md and HEARTBEAT.md, and the agent's memory and user profile (hidden text
 * there persists into every later session). The path finding names the rule that decided its
 * level, so a file matched by a stricter rule is covered by that rule's own effect.
 */
export const INSTRUCTION_FILE_RULES: ReadonlySet<string> = new Set([
  'editor.agent_instructions',
  'ws.agents',
  'ws.heartbeat',
  'ws.memory',
  'ws.user',
]);
export const INVISIBLE_IN_INSTRUCTIONS_RULE = 'content.invisible_text_in_instructions';

interface PathFindingLike {
  readonly path: string;
  readonly resolved?: string;
  readonly access: string;
  readonly ruleId?: string;
}

/** Only the added lines of a unified diff (`+…`, not the `+++` header). */
const addedLines = (patch: string): string =>
  patch
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1))
    .join('\n');

const NAMES: Record<string, string> = {
  'invisible-text.tag-characters': 'Unicode tag characters',
  'invisible-text.bidi-controls': 'bidirectional control characters',
  'invisible-text.zero-width-characters': 'zero-width characters',
  'invisible-text.variation-selector-run': 'a run of variation selectors',
};

const MAX_WALK_DEPTH = 12;
const MAX_WALK_STRINGS = 100_000;

const OWNER_KEYS = ['path', 'file', 'filepath', 'filename', 'target', 'destination', 'uri'];

/**
 * The strings a write puts into files: every string of the payload except paths, URLs and
 * patterns (by key name, as Tier 1 classes them) and text being replaced (keys starting with
 * `old`); of a `patch`/`diff` only the added lines. A string inside an object that names its own
 * file (`{ path, newText }`, as in a multi-file patch) counts only when that file is one of
 * `targets` (`'any'`: every string counts, for writes that name no file, such as memory_write).
 * `complete` is false when the walk hit its limits.
 */
export function writtenStrings(
  payload: Readonly<Record<string, unknown>>,
  targets: ReadonlySet<string> | 'any',
): { strings: { field: string; text: string }[]; complete: boolean } {
  const strings: { field: string; text: string }[] = [];
  let complete = true;
  const visit = (value: unknown, field: string, key: string, owner: string | undefined, depth: number): void => {
    if (typeof value === 'string') {
      if (strings.length >= MAX_WALK_STRINGS) {
        complete = false;
        return;
      }
      const cls = FIELD_CLASS_OF_KEY[key];
      if (cls === 'path' || cls === 'url' || cls === 'pattern' || key.startsWith('old')) return;
      if (owner !== undefined && targets !== 'any' && !targets.has(owner)) return;
      strings.push({ field, text: key === 'patch' || key === 'diff' ? addedLines(value) : value });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth >= MAX_WALK_DEPTH) {
      complete = false;
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, `${field}[${i}]`, key, owner, depth + 1));
      return;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    const own =
      depth === 0
        ? undefined
        : (entries.find(([k, v]) => typeof v === 'string' && OWNER_KEYS.includes(k.toLowerCase().replace(/[_-]/g, '')))?.[1] as
            string | undefined);
    for (const [k, v] of entries) visit(v, field ? `${field}.${k}` : k, k.toLowerCase().replace(/[_-]/g, ''), own ?? owner, depth + 1);
  };
  visit(payload, '', '', undefined, 0);
  return { strings, complete };
}

/** The action's writes to agent instruction files. */
const instructionWrites = (findings: readonly PathFindingLike[]): PathFindingLike[] =>
  findings.filter((f) => f.access === 'write' && f.ruleId !== undefined && INSTRUCTION_FILE_RULES.has(f.ruleId));

/** The first invisible-text rule that matches `text`, with the offset of its first match. */
function firstInvisible(rules: readonly CompiledContentRule[], text: string): { id: string; name: string; offset: number } | undefined {
  const ascii = isAscii(text);
  for (const r of rules) {
    if (r.rule.category !== 'invisible_text') continue;
    const m = matchSpansIn(r.regex, text, 1, ascii)[0];
    if (m) return { id: r.rule.id, name: NAMES[r.rule.id] ?? 'invisible characters', offset: m[0] };
  }
  return undefined;
}

/**
 * A block (rule ids and a reason) when the action writes to an agent instruction file and any
 * text it writes contains invisible characters; undefined otherwise. Text being replaced
 * (`old_string`, `oldText` …) and the removed lines of a patch are not checked, so an edit that
 * removes hidden characters is allowed.
 */
export function invisibleTextInInstructionWrite(
  findings: readonly PathFindingLike[],
  payload: Readonly<Record<string, unknown>>,
  rules: readonly CompiledContentRule[] = loadContentRules(),
): { rules: string[]; reason: string } | undefined {
  const hits = instructionWrites(findings);
  const target = hits[0];
  if (!target) return undefined;
  const targets = new Set(hits.map((f) => f.path));
  const file = target.resolved ?? target.path;
  const { strings, complete } = writtenStrings(payload, targets);
  for (const s of strings) {
    const hit = firstInvisible(rules, s.text);
    if (!hit) continue;
    return {
      rules: [INVISIBLE_IN_INSTRUCTIONS_RULE, `content.${hit.id}`],
      reason: `Blocked: the write to ${file} puts ${hit.name} (${hit.id}, at offset ${hit.offset} of \`${s.field}\`) into an agent instruction file; agents read such characters, people reviewing the file cannot see them. Remove them and write the file again.`,
    };
  }
  if (!complete) {
    return {
      rules: [INVISIBLE_IN_INSTRUCTIONS_RULE, 'content.payload_too_complex'],
      reason: `Blocked: the write to ${file} (an agent instruction file) is nested deeper than ${MAX_WALK_DEPTH} levels or holds more than ${MAX_WALK_STRINGS} strings, so it cannot be checked for invisible characters.`,
    };
  }
  return undefined;
}

/** Largest file, most files and most bytes in all that a copy or move into an instruction file may bring along (each is read and checked, on the caller's thread). */
export const MAX_COPIED_BYTES = 4 * 1024 * 1024;
export const MAX_COPIED_FILES = 500;
export const MAX_COPIED_TOTAL_BYTES = 16 * 1024 * 1024;

/**
 * A block when the action writes an agent instruction file from other files (copy_file /
 * move_file / copy_dir / move_dir sources, the files a command reads or moves) and any of those
 * files holds invisible characters, or cannot be read to be checked (missing, not a regular file,
 * too large: fail closed). `sourcesOf` gives their absolute paths (asked only when an instruction
 * file is written). Without this, hidden text written to a scratch file and then moved over
 * CLAUDE.md would never be seen by the write check above.
 */
export function invisibleTextCopiedIntoInstructions(
  findings: readonly PathFindingLike[],
  sourcesOf: () => readonly string[],
  fs: Pick<FileSystemPort, 'listTree' | 'readText'>,
  rules: readonly CompiledContentRule[] = loadContentRules(),
): { rules: string[]; reason: string } | undefined {
  const target = instructionWrites(findings)[0];
  if (!target) return undefined;
  const sources = sourcesOf();
  if (sources.length === 0) return undefined;
  const file = target.resolved ?? target.path;
  const refuse = (rule: string, why: string) => ({
    rules: [INVISIBLE_IN_INSTRUCTIONS_RULE, rule],
    reason: `Blocked: ${file} is an agent instruction file and this action fills it from other files; ${why}`,
  });
  const files: string[] = [];
  for (const src of sources) {
    const tree = fs.listTree(src, MAX_COPIED_FILES);
    if (!tree) files.push(src);
    else if (tree.truncated)
      return refuse(
        'content.copy_too_large',
        `${src} holds more than ${MAX_COPIED_FILES} entries, too many to check each for invisible characters.`,
      );
    else files.push(...tree.entries.filter((e) => fs.listTree(e, 0) === undefined));
    if (files.length > MAX_COPIED_FILES)
      return refuse(
        'content.copy_too_large',
        `it copies more than ${MAX_COPIED_FILES} files, too many to check each for invisible characters.`,
      );
  }
  let budget = MAX_COPIED_TOTAL_BYTES;
  for (const path of files) {
    const limit = Math.min(MAX_COPIED_BYTES, budget);
    const text = fs.readText?.(path, limit);
    if (text === undefined) {
      if (limit < MAX_COPIED_BYTES)
        return refuse(
          'content.copy_too_large',
          `the files it copies hold more than ${MAX_COPIED_TOTAL_BYTES / 1024 / 1024} MB in all, too much to check for invisible characters.`,
        );
      return refuse(
        'content.copy_unreadable',
        `${path} cannot be read to check it for invisible characters (missing, not a regular file, or larger than ${MAX_COPIED_BYTES / 1024 / 1024} MB). Write the content directly instead.`,
      );
    }
    budget -= text.length; // characters, near enough to bytes for a bound on the work
    const hit = firstInvisible(rules, text);
    if (!hit) continue;
    return {
      rules: [INVISIBLE_IN_INSTRUCTIONS_RULE, `content.${hit.id}`],
      reason: `Blocked: the action fills ${file} (an agent instruction file) from ${path}, which holds ${hit.name} (${hit.id}, at offset ${hit.offset}); agents read such characters, people reviewing the file cannot see them.`,
    };
  }
  return undefined;
}
