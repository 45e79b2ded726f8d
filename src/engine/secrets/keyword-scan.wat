;; The keyword automaton's walk over a text (see KeywordAutomaton in rules.ts), in WebAssembly
;; because it touches every character. One walk is a chain of dependent loads (the next state
;; depends on the last), so its speed is bound by memory latency, not by work; this module runs
;; four walks at once, over four consecutive segments of the text, to overlap those latencies.
;; A walk that starts `lead` code units before its segment (at the root) is in the right state by
;; the segment's start: an Aho-Corasick state only depends on the last (longest string) code units
;; read. Each walk records only the hits that end inside its own segment.
;;
;; Memory, laid out by the host: `classes` the class of every UTF-16 code unit (u8, 65536 entries:
;; class 0, "in no string", sends every state to the root); `delta` the transition table (i32, as
;; in rules.ts: t << shift, or ~(t << shift) when strings end in t); `text` the code units (u16);
;; `hits` four regions of `cap` pairs of i32 (end offset, t << shift), one per segment.
(module
  (memory (export "memory") 1)
  ;; Hits written per segment by the last call.
  (global $n0 (export "n0") (mut i32) (i32.const 0))
  (global $n1 (export "n1") (mut i32) (i32.const 0))
  (global $n2 (export "n2") (mut i32) (i32.const 0))
  (global $n3 (export "n3") (mut i32) (i32.const 0))

  ;; Walks segment j = [bj, bj+1) of `text` (b0 <= b1 <= b2 <= b3 <= b4, code unit offsets),
  ;; each from max(0, bj - lead). `cap` must be at least the length of the longest segment.
  (func (export "walk4")
    (param $text i32) (param $classes i32) (param $delta i32) (param $hits i32) (param $cap i32)
    (param $lead i32) (param $b0 i32) (param $b1 i32) (param $b2 i32) (param $b3 i32) (param $b4 i32)
    (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $k0 i32) (local $k1 i32) (local $k2 i32) (local $k3 i32)
    (local $h0 i32) (local $h1 i32) (local $h2 i32) (local $h3 i32)
    (local $steps i32) (local $at i32)
    (local.set $p0 (call $startOf (local.get $b0) (local.get $lead)))
    (local.set $p1 (call $startOf (local.get $b1) (local.get $lead)))
    (local.set $p2 (call $startOf (local.get $b2) (local.get $lead)))
    (local.set $p3 (call $startOf (local.get $b3) (local.get $lead)))
    (local.set $h0 (local.get $hits))
    (local.set $h1 (i32.add (local.get $h0) (i32.shl (local.get $cap) (i32.const 3))))
    (local.set $h2 (i32.add (local.get $h1) (i32.shl (local.get $cap) (i32.const 3))))
    (local.set $h3 (i32.add (local.get $h2) (i32.shl (local.get $cap) (i32.const 3))))
    ;; All four walks together, as long as each has code units left.
    (local.set $steps
      (call $min4
        (i32.sub (local.get $b1) (local.get $p0)) (i32.sub (local.get $b2) (local.get $p1))
        (i32.sub (local.get $b3) (local.get $p2)) (i32.sub (local.get $b4) (local.get $p3))))
    (block $done
      (loop $next
        (br_if $done (i32.le_s (local.get $steps) (i32.const 0)))
        (local.set $steps (i32.sub (local.get $steps) (i32.const 1)))
        ;; walk 0
        (local.set $s0 (i32.load (i32.add (local.get $delta) (i32.shl (i32.or (local.get $s0)
          (i32.load8_u (i32.add (local.get $classes)
            (i32.load16_u (i32.add (local.get $text) (i32.shl (local.get $p0) (i32.const 1))))))) (i32.const 2)))))
        (local.set $p0 (i32.add (local.get $p0) (i32.const 1)))
        ;; walk 1
        (local.set $s1 (i32.load (i32.add (local.get $delta) (i32.shl (i32.or (local.get $s1)
          (i32.load8_u (i32.add (local.get $classes)
            (i32.load16_u (i32.add (local.get $text) (i32.shl (local.get $p1) (i32.const 1))))))) (i32.const 2)))))
        (local.set $p1 (i32.add (local.get $p1) (i32.const 1)))
        ;; walk 2
        (local.set $s2 (i32.load (i32.add (local.get $delta) (i32.shl (i32.or (local.get $s2)
          (i32.load8_u (i32.add (local.get $classes)
            (i32.load16_u (i32.add (local.get $text) (i32.shl (local.get $p2) (i32.const 1))))))) (i32.const 2)))))
        (local.set $p2 (i32.add (local.get $p2) (i32.const 1)))
        ;; walk 3
        (local.set $s3 (i32.load (i32.add (local.get $delta) (i32.shl (i32.or (local.get $s3)
          (i32.load8_u (i32.add (local.get $classes)
            (i32.load16_u (i32.add (local.get $text) (i32.shl (local.get $p3) (i32.const 1))))))) (i32.const 2)))))
        (local.set $p3 (i32.add (local.get $p3) (i32.const 1)))
        ;; Strings ended somewhere (rare): record and go back to the root-relative encoding.
        (br_if $next (i32.ge_s (i32.or (i32.or (local.get $s0) (local.get $s1)) (i32.or (local.get $s2) (local.get $s3))) (i32.const 0)))
        (if (i32.lt_s (local.get $s0) (i32.const 0)) (then
          (local.set $s0 (i32.xor (local.get $s0) (i32.const -1)))
          (if (i32.gt_u (local.get $p0) (local.get $b0)) (then
            (local.set $at (i32.add (local.get $h0) (i32.shl (local.get $k0) (i32.const 3))))
            (i32.store (local.get $at) (local.get $p0))
            (i32.store offset=4 (local.get $at) (local.get $s0))
            (local.set $k0 (i32.add (local.get $k0) (i32.const 1)))))))
        (if (i32.lt_s (local.get $s1) (i32.const 0)) (then
          (local.set $s1 (i32.xor (local.get $s1) (i32.const -1)))
          (if (i32.gt_u (local.get $p1) (local.get $b1)) (then
            (local.set $at (i32.add (local.get $h1) (i32.shl (local.get $k1) (i32.const 3))))
            (i32.store (local.get $at) (local.get $p1))
            (i32.store offset=4 (local.get $at) (local.get $s1))
            (local.set $k1 (i32.add (local.get $k1) (i32.const 1)))))))
        (if (i32.lt_s (local.get $s2) (i32.const 0)) (then
          (local.set $s2 (i32.xor (local.get $s2) (i32.const -1)))
          (if (i32.gt_u (local.get $p2) (local.get $b2)) (then
            (local.set $at (i32.add (local.get $h2) (i32.shl (local.get $k2) (i32.const 3))))
            (i32.store (local.get $at) (local.get $p2))
            (i32.store offset=4 (local.get $at) (local.get $s2))
            (local.set $k2 (i32.add (local.get $k2) (i32.const 1)))))))
        (if (i32.lt_s (local.get $s3) (i32.const 0)) (then
          (local.set $s3 (i32.xor (local.get $s3) (i32.const -1)))
          (if (i32.gt_u (local.get $p3) (local.get $b3)) (then
            (local.set $at (i32.add (local.get $h3) (i32.shl (local.get $k3) (i32.const 3))))
            (i32.store (local.get $at) (local.get $p3))
            (i32.store offset=4 (local.get $at) (local.get $s3))
            (local.set $k3 (i32.add (local.get $k3) (i32.const 1)))))))
        (br $next)))
    ;; What is left of each segment, one walk at a time.
    (global.set $n0 (call $walk1 (local.get $text) (local.get $classes) (local.get $delta) (local.get $h0) (local.get $k0) (local.get $b0) (local.get $p0) (local.get $b1) (local.get $s0)))
    (global.set $n1 (call $walk1 (local.get $text) (local.get $classes) (local.get $delta) (local.get $h1) (local.get $k1) (local.get $b1) (local.get $p1) (local.get $b2) (local.get $s1)))
    (global.set $n2 (call $walk1 (local.get $text) (local.get $classes) (local.get $delta) (local.get $h2) (local.get $k2) (local.get $b2) (local.get $p2) (local.get $b3) (local.get $s2)))
    (global.set $n3 (call $walk1 (local.get $text) (local.get $classes) (local.get $delta) (local.get $h3) (local.get $k3) (local.get $b3) (local.get $p3) (local.get $b4) (local.get $s3))))

  ;; One walk over [p, e) from state s, recording hits that end after `from` at hits[k..]; returns k.
  (func $walk1
    (param $text i32) (param $classes i32) (param $delta i32) (param $hits i32) (param $k i32)
    (param $from i32) (param $p i32) (param $e i32) (param $s i32)
    (result i32)
    (local $at i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $e)))
        (local.set $s (i32.load (i32.add (local.get $delta) (i32.shl (i32.or (local.get $s)
          (i32.load8_u (i32.add (local.get $classes)
            (i32.load16_u (i32.add (local.get $text) (i32.shl (local.get $p) (i32.const 1))))))) (i32.const 2)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $next (i32.ge_s (local.get $s) (i32.const 0)))
        (local.set $s (i32.xor (local.get $s) (i32.const -1)))
        (br_if $next (i32.le_u (local.get $p) (local.get $from)))
        (local.set $at (i32.add (local.get $hits) (i32.shl (local.get $k) (i32.const 3))))
        (i32.store (local.get $at) (local.get $p))
        (i32.store offset=4 (local.get $at) (local.get $s))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (local.get $k))

  (func $startOf (param $b i32) (param $lead i32) (result i32)
    (select (i32.const 0) (i32.sub (local.get $b) (local.get $lead)) (i32.lt_s (local.get $b) (local.get $lead))))

  (func $min4 (param $a i32) (param $b i32) (param $c i32) (param $d i32) (result i32)
    (local $m i32)
    (local.set $m (local.get $a))
    (if (i32.lt_s (local.get $b) (local.get $m)) (then (local.set $m (local.get $b))))
    (if (i32.lt_s (local.get $c) (local.get $m)) (then (local.set $m (local.get $c))))
    (if (i32.lt_s (local.get $d) (local.get $m)) (then (local.set $m (local.get $d))))
    (local.get $m))
)
