/**
 * Which services a test file needs, read from what the file declares — never guessed from its
 * name. A file (or a project module it imports) declares a need with a line comment:
 *
 * ```ts
 * // test-needs: env                                   the shared environment: Docker network,
 * //                                                   broker, Connect worker, PostgreSQL
 * // test-needs: postgres                              the suite's PostgreSQL server only
 * // test-needs: docker                                the machine's Docker daemon only
 * // test-exclusive: restarts the shared broker        run alone: it disturbs what others share
 * ```
 *
 * A file that declares nothing (and imports nothing that does) is a unit test: `tools/test.ts`
 * runs it with no Docker daemon, no PostgreSQL and no environment reachable, so an undeclared
 * need fails loudly instead of passing by luck.
 *
 * Needs are inherited through static imports of project modules (`import type` and imports of
 * packages are not followed), so a fixture that starts a service declares it once for every
 * file that uses it.
 *
 * @example
 * ```ts
 * import { declaredNeeds } from "./test_files.ts";
 * const d = await declaredNeeds(new URL("./test_test.ts", import.meta.url).pathname);
 * console.log(d.needs.size === 0 ? "unit" : [...d.needs].join(","));
 * ```
 * @module
 */
import { dirname, resolve } from "node:path";

/** A service a test file can declare. */
export const NEEDS = ["env", "postgres", "docker"] as const;
/** One of {@link NEEDS}. */
export type Need = typeof NEEDS[number];

/** What a test file declares, with its own and its imports' declarations merged. */
export interface Declaration {
  /** Services the file needs (empty: a unit test). */
  needs: Set<Need>;
  /** Why it must run alone, or null when it can share the environment with another file. */
  exclusive: string | null;
  /** Where each need was declared (`file:line`), for a message that names it. */
  sources: string[];
}

const NEEDS_LINE = /^\s*\/\/\s*test-needs:\s*(.+?)\s*$/;
const EXCLUSIVE_LINE = /^\s*\/\/\s*test-exclusive:\s*(.+?)\s*$/;
// static value imports of relative modules (`import type` excluded); `export ... from` too
const IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)(?:[\s\S]*?\bfrom\s*)?["'](\.{1,2}\/[^"']+\.ts)["']/gm;

/**
 * Parse one module's own declarations and its relative static imports (pure; exported for its
 * unit test). An unknown need is an error naming the line.
 */
export function parseModule(
  path: string,
  text: string,
): { needs: Need[]; exclusive: string | null; imports: string[]; lines: string[] } {
  const needs: Need[] = [];
  const lines: string[] = [];
  let exclusive: string | null = null;
  text.split("\n").forEach((line, i) => {
    const n = NEEDS_LINE.exec(line);
    if (n) {
      for (const word of n[1].split(/[\s,]+/).filter(Boolean)) {
        if (!(NEEDS as readonly string[]).includes(word)) {
          throw new Error(
            `${path}:${i + 1}: unknown test need '${word}' (one of ${NEEDS.join(", ")})`,
          );
        }
        needs.push(word as Need);
        lines.push(`${path}:${i + 1}`);
      }
    }
    const x = EXCLUSIVE_LINE.exec(line);
    if (x) exclusive = x[1];
  });
  const imports: string[] = [];
  for (const m of text.matchAll(IMPORT)) imports.push(resolve(dirname(path), m[1]));
  return { needs, exclusive, imports, lines };
}

/**
 * The declaration of the test file at `path`: its own lines and those of every project module
 * it imports, transitively.
 */
export async function declaredNeeds(
  path: string,
  cache: Map<string, ReturnType<typeof parseModule>> = new Map(),
): Promise<Declaration> {
  const out: Declaration = { needs: new Set(), exclusive: null, sources: [] };
  const seen = new Set<string>();
  const queue = [resolve(path)];
  while (queue.length > 0) {
    const p = queue.pop()!;
    if (seen.has(p)) continue;
    seen.add(p);
    let m = cache.get(p);
    if (!m) {
      let text: string;
      try {
        text = await Deno.readTextFile(p);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue; // a generated or optional module
        throw e;
      }
      m = parseModule(p, text);
      cache.set(p, m);
    }
    for (const n of m.needs) out.needs.add(n);
    out.sources.push(...m.lines);
    if (p === resolve(path) && m.exclusive) out.exclusive = m.exclusive;
    queue.push(...m.imports);
  }
  return out;
}
