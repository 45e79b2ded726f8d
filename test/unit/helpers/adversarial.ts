// Adversarial inputs shared by the unit tests (which check every one gets a result) and `npm run bench`
// (bench/limits.ts, which times them): one list, so the bench measures exactly what the tests check.

/** 64 KB strings built to make a pattern backtrack or a scan loop: each goes into every text field of an action. */
export function heuristicsAdversarialInputs(): Record<string, string> {
  const kb64 = 64 * 1024;
  const fill = (unit: string) => unit.repeat(Math.ceil(kb64 / unit.length)).slice(0, kb64);
  return {
    'a…': fill('a'),
    spaces: fill(' '),
    'curl…': fill('curl '),
    'ignore…': fill('ignore all previous '),
    '../…': fill('../'),
    '%2e…': fill('%2e'),
    '\\x41…': fill('\\x41'),
    quotes: fill("a'b'"),
    'A…': fill('A'),
    b64ish: fill('aB3+'),
    'html comment': '<!--' + fill('ai agent must '),
    'rm -r…': fill('rm -r '),
    '$(…': fill('$('),
    'chmod -R': fill('chmod -R 777 '),
    'eyJ…': fill('eyJabc.'),
    dashes: fill('-'),
    'echo blob': 'echo ' + fill('QUJD') + ' | base64 -d',
    'zero-width': fill('a\u200b'),
    fullwidth: fill('ｉ'),
    fork: fill(':(){ '),
    unc: fill('\\\\'),
    dots: fill('a.'),
    'nested parens': fill('(('),
    sockets: fill('socket.connect('),
    pipes: fill('| '),
    tags: fill(String.fromCodePoint(0xe0041)),
    'dev tcp': fill('bash >& /dev/tcp/'),
    mkfifo: fill('mkfifo x | '),
    'md image': fill('![a](https://x/?a='),
    schema: fill('"$schema": "https://'),
    hex: fill('0123456789abcdef'),
    percent: fill('%41'),
    caret: fill('a^'),
    ticks: fill('a`'),
    random: Array.from({ length: kb64 }, (_, i) => String.fromCharCode(32 + ((i * 7919 + 13) % 95))).join(''),
  };
}

/** About 256 KB texts for content inspection: invisible characters, homoglyphs, repeated cues, base64-like runs. */
export function contentAdversarialInputs(): [string, string][] {
  return [
    ['zero-width', 'a\u200b'.repeat(131072)],
    ['homoglyph words', 'p\u0430y '.repeat(65536)],
    ['fullwidth', '\uff41'.repeat(262144)],
    ['tag characters', '\u{E0041}'.repeat(131072)],
    ['repeated injection', 'ignore all previous instructions. '.repeat(8000)],
    ['base64-like', 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo= '.repeat(7000)],
  ];
}
