// `bulwark redact`: copies stdin to stdout with every secret replaced by `[REDACTED:<rule-id>]`,
// streaming. Text is written as soon as the StreamingRedactor has settled it (only a tail that
// could still grow into a secret is held, and a flush timer re-checks it within 50 ms of the last
// chunk), so a long-running producer (`tail -f`, a build log, a model's output) is redacted live.
// The output equals batch redaction of the whole input for every chunking of it.
//
// Encoding: the input is decoded as UTF-8 with a streaming decoder, so a character split across
// reads is joined. Invalid UTF-8 is not passed through and does not stop the stream: each invalid
// sequence becomes U+FFFD (so a log with one bad byte is still redacted as a whole), and the count
// is reported on stderr at the end. A byte-order mark is kept. Output is UTF-8.
//
// Exit status: 0 when the input was read to its end (also with invalid UTF-8, which is reported),
// 2 on a usage error or when reading or writing fails. A closed stdout (`… | head`) ends quietly.
// `--report`: a one-line JSON summary on stderr at the end — how many secrets per rule id, the
// input size and the invalid-UTF-8 count; never a secret value.
import os from 'node:os';
import { installKnownSecrets } from '../node/known-secrets';
import type { Readable, Writable } from 'node:stream';
import { StreamingRedactor, loadSecretRules } from '../engine/secrets';
import { errorMessage } from '../engine/error-message';

export const REDACT_USAGE =
  '  bulwark redact [--report]  < in > out   (secrets in stdin replaced by [REDACTED:rule-id] on stdout, streaming)';

export interface RedactIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** Counts `[REDACTED:<id>]` placeholders in a stream of text pieces (a placeholder may span pieces). */
class PlaceholderCounter {
  readonly counts = new Map<string, number>();
  private carry = '';
  private static readonly RE = /\[REDACTED:([a-z0-9]+(?:-[a-z0-9]+)*)\]/g;

  feed(text: string): void {
    const s = this.carry + text;
    const re = PlaceholderCounter.RE;
    re.lastIndex = 0;
    let end = 0;
    for (let m = re.exec(s); m; m = re.exec(s)) {
      this.counts.set(m[1]!, (this.counts.get(m[1]!) ?? 0) + 1);
      end = m.index + m[0].length;
    }
    // Only the last `[` after the last placeholder can begin one that is still incomplete.
    const open = s.lastIndexOf('[');
    this.carry = open >= end && s.length - open < 96 ? s.slice(open) : '';
  }
}

/** Counts the UTF-8 encoding of U+FFFD (EF BF BD) in a byte stream, across chunk boundaries. */
class EncodedReplacementCounter {
  count = 0;
  private state = 0; // bytes of EF BF BD matched so far

  feed(bytes: Uint8Array): void {
    let st = this.state;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (st === 0) st = b === 0xef ? 1 : 0;
      else if (st === 1) st = b === 0xbf ? 2 : b === 0xef ? 1 : 0;
      else if (b === 0xbd) {
        this.count++;
        st = 0;
      } else st = b === 0xef ? 1 : 0;
    }
    this.state = st;
  }
}

const countReplacements = (s: string): number => {
  let n = 0;
  for (let i = s.indexOf('\ufffd'); i >= 0; i = s.indexOf('\ufffd', i + 1)) n++;
  return n;
};

export async function runRedact(
  argv: string[],
  io: RedactIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let report = false;
  for (const a of argv) {
    if (a === '--report') report = true;
    else if (a === '-h' || a === '--help') {
      io.stdout.write(`usage:\n${REDACT_USAGE}\n`);
      return 0;
    } else {
      io.stderr.write(`bulwark: ${a.startsWith('-') ? `unknown option ${a}` : `unexpected argument \`${a}\``} (see bulwark --help)\n`);
      return 2;
    }
  }

  const rules = loadSecretRules();
  // The user's known secrets (the current directory's .env files, secret-named variables, credential
  // files in the home directory) are masked by value, whatever their shape.
  installKnownSecrets({ workspaceRoots: [process.cwd()], home: os.homedir(), env: process.env });
  const { stdin, stdout, stderr } = io;
  let closedPipe = false;
  let writeError: Error | undefined;
  let needDrain = false;
  stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') closedPipe = true;
    else writeError = e;
  });
  const inCount = new PlaceholderCounter();
  const outCount = new PlaceholderCounter();
  const emit = (safe: string): void => {
    if (closedPipe || writeError) return;
    if (report) outCount.feed(safe);
    if (!stdout.write(safe)) needDrain = true;
  };
  const redactor = new StreamingRedactor(rules, emit);
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  const encodedFffd = new EncodedReplacementCounter();
  let decodedFffd = 0;
  let bytesIn = 0;
  const feed = (text: string): void => {
    if (text === '') return;
    decodedFffd += countReplacements(text);
    if (report) inCount.feed(text);
    redactor.write(text);
  };

  try {
    for await (const chunk of stdin) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Uint8Array);
      bytesIn += bytes.length;
      encodedFffd.feed(bytes);
      feed(decoder.decode(bytes, { stream: true }));
      if (closedPipe) break;
      if (writeError) throw writeError;
      if (needDrain) {
        needDrain = false;
        // Backpressure: read no more input until stdout has taken what was written.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            stdout.off('drain', done);
            stdout.off('close', done);
            stdout.off('error', done);
            resolve();
          };
          stdout.on('drain', done);
          stdout.on('close', done);
          stdout.on('error', done);
        });
      }
    }
    if (!closedPipe) {
      feed(decoder.decode()); // an incomplete sequence at the end becomes U+FFFD
      redactor.close();
      await new Promise<void>((resolve) => {
        stdout.write('', () => resolve());
      });
    }
  } catch (e) {
    stderr.write(`bulwark: redact: ${errorMessage(e)}\n`);
    return 2;
  } finally {
    closeQuietly(redactor);
  }
  if (writeError) {
    stderr.write(`bulwark: redact: cannot write the output: ${(writeError as Error).message}\n`);
    return 2;
  }

  const invalid = Math.max(0, decodedFffd - encodedFffd.count);
  if (invalid > 0) stderr.write(`bulwark: redact: the input is not valid UTF-8: ${invalid} invalid sequence(s) replaced by U+FFFD\n`);
  if (report) {
    const secrets: Record<string, number> = {};
    let total = 0;
    for (const [id, n] of [...outCount.counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const found = n - (inCount.counts.get(id) ?? 0); // placeholders already in the input are not findings
      if (found > 0) {
        secrets[id] = found;
        total += found;
      }
    }
    stderr.write(
      JSON.stringify({ redacted: total, rules: secrets, bytes_in: bytesIn, invalid_utf8: invalid, complete: !closedPipe }) + '\n',
    );
  }
  return 0;
}

function closeQuietly(r: StreamingRedactor): void {
  try {
    r.close();
  } catch {
    /* already closed */
  }
}
