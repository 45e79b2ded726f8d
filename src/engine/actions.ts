// The action model: every action type Bulwark knows, defined once. Protection (access of the path
// fields, searches below a directory), the engine (floor tier), the Shield (classifier skip list,
// the invalid-policy rule) and IFC (sink of a type the IFC policy does not name) all read this
// table. A type that is not in it gets UNKNOWN_ACTION: Tier 2 at least, its paths written, and a
// possible external sink. Adding a type is one row here and one case in action-model.test.ts.
import type { PathAccess, Tier } from './types';

/**
 * Where the data of an action can flow, for IFC when its policy does not name the type: judged like
 * the representative type of the kind (SINK_REPRESENTATIVES). `unknown`: any of the ways out.
 */
export type SinkKind = 'none' | 'network' | 'message' | 'email' | 'exec' | 'memory' | 'file_write' | 'file_read' | 'unknown';

/**
 * What an action reads below a directory it names. `contents`: every file (grep); `names`: every
 * directory's listing (recursive list, glob search); `names_if_recursive`: `names` when the payload
 * asks for recursion (`recursive: true`, or a depth above 1), otherwise only the directory itself.
 */
export type SearchKind = 'none' | 'contents' | 'names' | 'names_if_recursive';

export interface ActionTypeSpec {
  /** Access of the payload's path fields (and of any other path found in the payload). */
  readonly access: PathAccess;
  /** Access of the source fields (`path`, `source`, `file`, `paths`, `files`) when it differs: copies read, moves delete. */
  readonly sourceAccess?: PathAccess;
  /** Lowest tier that may approve it, whatever the policy says. */
  readonly floor: Tier;
  /** One line: why this floor and this access. */
  readonly why: string;
  /** The injection classifier over-fires on its payload: Tier 2 judges the content instead. */
  readonly skipClassifier: boolean;
  /** It only reads: with an invalid policy it still goes on to Tier 1 (every other type is blocked). */
  readonly readOnly: boolean;
  readonly sink: SinkKind;
  readonly search: SearchKind;
  /** copy_dir / move_dir: each file of the source tree is also checked at its destination. */
  readonly copiesTree?: boolean;
}

const row = (spec: Omit<ActionTypeSpec, 'skipClassifier' | 'readOnly' | 'search'> & Partial<ActionTypeSpec>): ActionTypeSpec => ({
  skipClassifier: false,
  readOnly: false,
  search: 'none',
  ...spec,
});

/** Every action type Bulwark knows. The hook bridge maps each agent's tools to these names. */
export const ACTION_TYPES = {
  // ---- files
  read_file: row({
    access: 'read',
    floor: 0,
    readOnly: true,
    sink: 'file_read',
    why: 'reads one file; protection decides which files may be read',
  }),
  write_file: row({
    access: 'write',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'creates or replaces one file; protection and the policy decide where',
  }),
  edit_file: row({
    access: 'write',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'changes part of an existing file (old/new text or a list of edits): a write of that file',
  }),
  notebook_edit: row({
    access: 'write',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'changes a cell of a notebook: a write of that file (a notebook can hold code that runs when opened)',
  }),
  delete_file: row({
    access: 'delete',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'removes a file or directory; protection checks what lies below it',
  }),
  move_file: row({
    access: 'write',
    sourceAccess: 'delete',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'removes its source and writes its destination',
  }),
  copy_file: row({
    access: 'write',
    sourceAccess: 'read',
    floor: 0,
    skipClassifier: true,
    sink: 'file_write',
    why: 'reads its source and writes its destination',
  }),
  copy_dir: row({
    access: 'write',
    sourceAccess: 'read',
    floor: 0,
    copiesTree: true,
    sink: 'file_write',
    why: 'reads a tree and writes every file of it at the destination',
  }),
  move_dir: row({
    access: 'write',
    sourceAccess: 'delete',
    floor: 0,
    copiesTree: true,
    sink: 'file_write',
    why: 'removes a tree and writes every file of it at the destination',
  }),
  create_directory: row({ access: 'write', floor: 0, sink: 'file_write', why: 'creates a directory: a write of that path' }),
  // ---- listing and searching
  list_directory: row({
    access: 'read',
    floor: 0,
    readOnly: true,
    sink: 'file_read',
    search: 'names_if_recursive',
    why: 'lists a directory; a recursive listing reads every directory below it',
  }),
  search_files: row({
    access: 'read',
    floor: 0,
    readOnly: true,
    sink: 'file_read',
    search: 'names',
    why: 'finds files by name below a directory: reads every directory listing below it',
  }),
  grep_files: row({
    access: 'read',
    floor: 0,
    readOnly: true,
    sink: 'file_read',
    search: 'contents',
    why: 'searches the text of every file below a directory: reads each of them',
  }),
  // ---- commands, network, messages
  execute_command: row({
    access: 'write',
    floor: 1,
    sink: 'exec',
    why: 'runs a shell command: its effects come from the shell analysis, a path in its payload counts as written, and it always gets a Tier 1 check',
  }),
  http_request: row({
    access: 'read',
    floor: 1,
    skipClassifier: true,
    sink: 'network',
    why: 'fetches a URL (SSRF-checked); what it sends leaves the machine',
  }),
  web_search: row({
    access: 'read',
    floor: 1,
    skipClassifier: true,
    sink: 'network',
    why: 'sends a query to a search engine: the query leaves the machine, like an http_request',
  }),
  send_email: row({ access: 'read', floor: 1, skipClassifier: true, sink: 'email', why: 'sends an email (attachments are read)' }),
  send_message: row({
    access: 'read',
    floor: 1,
    skipClassifier: true,
    sink: 'message',
    why: 'sends a chat message (attachments are read)',
  }),
  // ---- agent memory and sub-agents
  memory_write: row({ access: 'write', floor: 1, sink: 'memory', why: "writes the agent's long-term memory, which steers later sessions" }),
  memory_search: row({ access: 'read', floor: 0, readOnly: true, sink: 'file_read', why: "searches the agent's memory" }),
  agent_bookkeeping: row({
    access: 'write',
    floor: 0,
    sink: 'none',
    why: "updates the agent's own plan or to-do list (TodoWrite, update_plan, write_todos): nothing outside the conversation changes",
  }),
  task: row({
    access: 'write',
    floor: 2,
    sink: 'unknown',
    why: "hands instructions of the model's choosing to another agent, whose tool calls not every client sends through hooks: a Tier 2 review, and a possible sink",
  }),
  // ---- git (named by the Shield policy presets)
  git_status: row({
    access: 'read',
    floor: 0,
    readOnly: true,
    sink: 'file_read',
    why: 'shows the working tree state: reads the repository',
  }),
  git_diff: row({ access: 'read', floor: 0, readOnly: true, sink: 'file_read', why: 'shows changes: reads the repository' }),
  git_log: row({ access: 'read', floor: 0, readOnly: true, sink: 'file_read', why: 'shows history: reads the repository' }),
  git_commit: row({ access: 'write', floor: 1, sink: 'exec', why: 'writes the repository and runs its git hooks' }),
  git_branch: row({ access: 'write', floor: 1, sink: 'exec', why: 'writes the repository and may run its git hooks' }),
  git_checkout: row({ access: 'write', floor: 1, sink: 'exec', why: 'rewrites the working tree and runs the post-checkout hook' }),
  git_pull: row({ access: 'write', floor: 1, sink: 'exec', why: 'fetches from a remote, rewrites the working tree and runs merge hooks' }),
  git_push: row({ access: 'read', floor: 1, sink: 'network', why: 'sends commits to a remote: the data leaves the machine' }),
} as const satisfies Readonly<Record<string, ActionTypeSpec>>;

export type KnownActionType = keyof typeof ACTION_TYPES;
export const KNOWN_ACTION_TYPES = Object.keys(ACTION_TYPES) as readonly KnownActionType[];

/** The fail-closed row for every type not in ACTION_TYPES (another agent's tool, an MCP tool). */
export const UNKNOWN_ACTION: ActionTypeSpec = row({
  access: 'write',
  floor: 2,
  sink: 'unknown',
  why: 'a tool Bulwark does not know may do anything: it needs at least a Tier 2 review, every path it names counts as written, and it may send data out',
});

export const isKnownActionType = (type: string): type is KnownActionType => Object.prototype.hasOwnProperty.call(ACTION_TYPES, type);

/** The row of an action type: its own, or the fail-closed row. */
export function actionSpec(type: string): ActionTypeSpec {
  return isKnownActionType(type) ? ACTION_TYPES[type] : UNKNOWN_ACTION;
}

/** Payload fields of a known type that carry file-system paths (a string or an array of strings). */
export const PATH_FIELDS = ['path', 'source', 'destination', 'dir', 'file', 'target', 'paths', 'files'] as const;
/** The path fields that name what a copy or move reads or removes; the others name where it writes. */
export const SOURCE_FIELDS: ReadonlySet<string> = new Set(['path', 'source', 'file', 'paths', 'files']);

/** Access of one declared path field of a type. */
export function accessOf(spec: ActionTypeSpec, field: string): PathAccess {
  return spec.sourceAccess !== undefined && SOURCE_FIELDS.has(field) ? spec.sourceAccess : spec.access;
}

/** IFC: the types whose sink category stands for a sink kind when the policy does not name a type. */
export const SINK_REPRESENTATIVES: Readonly<Record<SinkKind, readonly KnownActionType[]>> = {
  none: [],
  network: ['http_request'],
  message: ['send_message'],
  email: ['send_email'],
  exec: ['execute_command'],
  memory: ['memory_write'],
  file_write: ['write_file'],
  file_read: ['read_file'],
  unknown: ['http_request', 'send_message', 'send_email'],
};

/** The Shield's default classifier skip list (the table's `skipClassifier` rows). */
export const CLASSIFIER_SKIP_TYPES: ReadonlySet<string> = new Set(KNOWN_ACTION_TYPES.filter((t) => ACTION_TYPES[t].skipClassifier));
