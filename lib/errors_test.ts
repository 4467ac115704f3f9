import assert from "node:assert/strict";
import { ERROR_CODES, EXIT, exitCodeFor, isErrorCode, SluiceError } from "./errors.ts";

/** The area each prefix names, and the few codes whose status is deliberately another. */
const AREA: Array<[string, number]> = [
  ["USAGE_", EXIT.USAGE],
  ["PROJECT_", EXIT.INVALID],
  ["SQL_", EXIT.INVALID],
  ["TYPE_", EXIT.INVALID],
  ["MANIFEST_", EXIT.INVALID],
  ["PLAN_", EXIT.INVALID],
  ["ARTIFACT_", EXIT.INVALID],
  ["GIT_", EXIT.INVALID],
  ["STATE_CORRUPT", EXIT.INVALID],
  ["BLOCKED_", EXIT.BLOCKED],
  ["STATE_LOCK_", EXIT.CONFLICT],
  ["STATE_CONFLICT", EXIT.CONFLICT],
  ["UNKNOWN_OUTCOME", EXIT.UNKNOWN_OUTCOME],
  ["ENV_", EXIT.ENVIRONMENT],
  ["CONNECT_", EXIT.ERROR],
  ["DOCKER_", EXIT.ERROR],
  ["KAFKA_", EXIT.ERROR],
  ["POSTGRES_", EXIT.ERROR],
  ["CANCELLED", EXIT.CANCELLED],
];
const EXCEPTIONS: Record<string, number> = {
  INTERNAL: EXIT.ERROR,
  GIT_TIMEOUT: EXIT.ERROR,
  CONNECT_CONFLICT: EXIT.CONFLICT,
  STATE_NOT_INITIALIZED: EXIT.ERROR,
};

Deno.test("every code's exit status is its prefix's area, except the named few", () => {
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    const expected = EXCEPTIONS[code] ?? AREA.find(([p]) => code.startsWith(p))?.[1];
    assert.notEqual(expected, undefined, `${code} has no area`);
    assert.equal(status, expected, code);
  }
});

Deno.test("every declared code is raised somewhere in lib/ or cli/ (no dead entries)", async () => {
  const sources: string[] = [];
  const walk = async (dir: URL) => {
    for await (const e of Deno.readDir(dir)) {
      const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
      if (e.isDirectory) await walk(url);
      else if (
        e.name.endsWith(".ts") && !e.name.endsWith("_test.ts") &&
        url.href !== new URL("./errors.ts", import.meta.url).href
      ) {
        sources.push(await Deno.readTextFile(url));
      }
    }
  };
  await walk(new URL("./", import.meta.url));
  await walk(new URL("../cli/", import.meta.url));
  const text = sources.join("\n");
  const unused = Object.keys(ERROR_CODES).filter((c) => !text.includes(`"${c}"`));
  assert.deepEqual(unused, []);
});

Deno.test("exitCodeFor maps a SluiceError by its declared code and anything else to 1", () => {
  assert.equal(exitCodeFor(new SluiceError("PLAN_TAMPERED", "x")), EXIT.INVALID);
  assert.equal(exitCodeFor(new SluiceError("STATE_LOCK_HELD", "x")), EXIT.CONFLICT);
  assert.equal(exitCodeFor(new SluiceError("GIT_TIMEOUT", "x")), EXIT.ERROR);
  assert.equal(exitCodeFor(new Error("a bug")), EXIT.ERROR);
  assert.equal(isErrorCode("BLOCKED_OOM"), true);
  assert.equal(isErrorCode("toString"), false);
});
