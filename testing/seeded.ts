/**
 * A small seeded generator (mulberry32) for tests that draw at random and must replay: the same
 * seed gives the same numbers, so a failure reproduces from the seed it prints.
 *
 * @example
 * ```ts
 * import { seeded } from "./seeded.ts";
 * const next = seeded(42);
 * console.log(next() === seeded(42)()); // true
 * ```
 * @module
 */

/** Numbers in [0, 1), the same sequence for the same seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
