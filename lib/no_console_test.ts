/**
 * lib never prints: journeys report through typed progress events, results and a logger, and
 * the CLI renders them. The one exception is the armed test-only fault switch's marker
 * (`SLUICE_FAULT_FIRED`, lib/fault/site.ts), the harness's signal that a worker died at the
 * armed site on purpose; it is written only under `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`.
 * @module
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { codeLines, productModules } from "../testing/sources.ts";

const LIB = new URL("./", import.meta.url).pathname;
const ALLOWED = [{ file: "fault/site.ts", line: /console\.error\(`SLUICE_FAULT_FIRED / }];

/** Lines that call the console, outside comments (JSDoc examples print, code does not). */
function consoleCalls(text: string): Array<{ line: number; text: string }> {
  return codeLines(text).filter(({ code }) => /\bconsole\.\w+\s*\(/.test(code))
    .map(({ line, code }) => ({ line, text: code.trim() }));
}

Deno.test("no module of lib/ writes to the console (except the armed fault marker)", async () => {
  const offending: string[] = [];
  let allowedSeen = 0;
  for (const path of await productModules(LIB)) {
    const file = relative(LIB, path);
    for (const call of consoleCalls(await Deno.readTextFile(path))) {
      if (ALLOWED.some((a) => a.file === file && a.line.test(call.text))) {
        allowedSeen++;
        continue;
      }
      offending.push(`lib/${file}:${call.line}: ${call.text}`);
    }
  }
  assert.deepEqual(offending, []);
  assert.equal(allowedSeen, 1, "the fault marker moved: update ALLOWED");
});

Deno.test("the scan finds a console call in code and skips one in a comment", () => {
  assert.deepEqual(consoleCalls("/**\n * console.log(x);\n */\nconst a = 1; console.warn(a);"), [
    { line: 4, text: "const a = 1; console.warn(a);" },
  ]);
});
