// Entropy of a candidate value: the detectors' entropy floors and the known-value skip rule both use it.

const byteCounts = new Int32Array(256);

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const n = s.length;
  if (n === 0) return 0;
  let wide: Map<number, number> | undefined;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 256) byteCounts[c]!++;
    else (wide ??= new Map()).set(c, (wide.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 256) {
      const k = byteCounts[c]!;
      if (k > 0) {
        const p = k / n;
        h -= p * Math.log2(p);
        byteCounts[c] = 0;
      }
    }
  }
  if (wide) {
    for (const k of wide.values()) {
      const p = k / n;
      h -= p * Math.log2(p);
    }
  }
  return h;
}
