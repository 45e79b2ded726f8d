// Where a program is: the sandbox probe, the landlock check, the run tool and the sandboxed terminal all look
// programs up the same way.
import fs from 'node:fs';

export function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (!dir) continue;
    const p = `${dir}/${name}`;
    if (isExecutable(p)) return p;
  }
  // The standard places, for a PATH that lost them (a hook's or a test's narrowed environment).
  return [`/usr/bin/${name}`, `/bin/${name}`, `/usr/local/bin/${name}`].find(isExecutable);
}
