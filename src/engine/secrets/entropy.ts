// Entropy of a candidate value: the detectors' entropy floors and the known-value skip rule both use it.

const byteCounts = new Int32Array(256);
// k·log2(k) for the counts a value of up to 4 KiB can have: H = log2(n) − Σ k·log2(k) / n needs one
// logarithm per value instead of one per distinct character (this runs on every candidate).
const KLOG = new Float64Array(4097);
for (let k = 2; k < KLOG.length; k++) KLOG[k] = k * Math.log2(k);
const klog = (k: number): number => (k < KLOG.length ? KLOG[k]! : k * Math.log2(k));

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
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 256) {
      const k = byteCounts[c]!;
      if (k > 0) {
        sum += klog(k);
        byteCounts[c] = 0;
      }
    }
  }
  if (wide) for (const k of wide.values()) sum += klog(k);
  return Math.max(0, Math.log2(n) - sum / n);
}
