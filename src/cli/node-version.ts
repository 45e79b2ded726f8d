// The oldest Node.js the `bulwark` program runs on. better-sqlite3 13 (the audit anchor, the hooks'
// state) dies with a segmentation fault in older ones, before any error could be reported, so every
// subcommand checks this first. One constant for the CLI and the hook (package.json `engines` agrees).

export const MIN_NODE_MAJOR = 22;

/** The running Node's major version. */
export const nodeMajor = (version: string = process.versions.node): number => Number(version.split('.')[0]);

/** Undefined when this Node is new enough; else the one line that says what is needed and how to get it. */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  if (nodeMajor(version) >= MIN_NODE_MAJOR) return undefined;
  return `Node.js ${MIN_NODE_MAJOR} or newer is needed (this is v${version}); install it from https://nodejs.org or with a version manager (\`nvm install ${MIN_NODE_MAJOR}\`), then run bulwark with that node`;
}
