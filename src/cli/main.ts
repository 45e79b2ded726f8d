// `bulwark` command line: `check` decides JSON-lines actions from stdin, `shell` prints the
// analysis of one command, `hook` answers an agent's hook call. Exit 0 on success, 2 on bad input
// (one line on stderr). Every subcommand is loaded on demand: a hook call is on the agent's critical
// path and must not wait for code it does not run.
import { UsageError } from './usage-error';
import { nodeVersionProblem } from './node-version';
import { errorMessage } from '../engine/error-message';

export { UsageError };

const HELP = new Set<string | undefined>([undefined, '-h', '--help', 'help']);

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  // Before anything loads SQLite or onnxruntime, which crash an old Node instead of failing. The hook
  // checks for itself: its refusal must be a deny in the agent's own dialect.
  const tooOld = HELP.has(cmd) || cmd === 'hook' ? undefined : nodeVersionProblem();
  if (tooOld) {
    process.stderr.write(`bulwark: ${tooOld}\n`);
    return 2;
  }
  try {
    switch (cmd) {
      case 'hook':
        return await (await import('./hook')).runHook(rest);
      case 'hook-server':
        return await (await import('./hook-server')).runHookServer(rest);
      case 'hooks':
        return await (await import('./hooks')).runHooks(rest);
      case 'check':
        return await (await import('./commands')).runCheck(rest);
      case 'shell':
        return await (await import('./commands')).runShell(rest);
      case 'policy':
        return await (await import('./commands')).runPolicy(rest);
      case 'audit':
        return await (await import('./commands')).runAudit(rest);
      case 'exec':
        return await (await import('./exec')).runExec(rest);
      case 'redact':
        return await (await import('./redact')).runRedact(rest);
      case 'scan':
        return await (await import('./scan')).runScan(rest);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write((await import('./commands')).USAGE + '\n');
        return cmd === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command \`${cmd}\``);
    }
  } catch (e) {
    // An error may quote its input (a policy file's line, an argument): no secret goes to stderr.
    const { redactTextOrWithhold } = await import('../engine/audit/redact');
    const msg = redactTextOrWithhold(errorMessage(e));
    process.stderr.write(`bulwark: ${msg.split('\n')[0]}${e instanceof UsageError ? ' (see bulwark --help)' : ''}\n`);
    return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    // main() answers every error itself; this is the redactor failing to load. Its text is not printed
    // (nothing could redact it), and the exit status says the command failed.
    () => {
      process.stderr.write('bulwark: internal error (the redactor could not be loaded)\n');
      process.exitCode = 2;
    },
  );
}
