/**
 * The product modules of a folder, for the structural tests (layers, the console, the CLI's
 * imports): every `.ts` file under it, tests aside, sorted; and the code lines of a module with
 * comments and JSDoc (whose examples import and print too) left out.
 *
 * @example
 * ```ts
 * import { codeLines, productModules } from "./sources.ts";
 * for (const f of await productModules("lib")) console.log(f, codeLines(await Deno.readTextFile(f)).length);
 * ```
 * @module
 */
import { join } from "node:path";

/** Every `.ts` file under `dir` but the tests, as paths under `dir`, sorted. */
export async function productModules(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await productModules(path));
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) out.push(path);
  }
  return out.sort();
}

/** The lines of a module that are code, numbered from 1 (comment lines left out). */
export function codeLines(text: string): Array<{ line: number; code: string }> {
  return text.split("\n").map((code, i) => ({ line: i + 1, code }))
    .filter(({ code }) => !/^\s*(\*|\/\/|\/\*)/.test(code));
}
