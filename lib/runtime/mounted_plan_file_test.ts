import assert from "node:assert/strict";
import { sha256Hex } from "../artifact/canonical.ts";
import { onCrossing } from "../fault/site.ts";
import type { SluiceError } from "../errors.ts";
import { MOUNTED_PLAN_WRITE } from "../protocol/replacement.ts";
import { writeMountedPlanFile } from "./mounted_plan_file.ts";

Deno.test("a mounted plan is written once, content-addressed and read-only, crossing its site", async () => {
  const dir = await Deno.makeTempDir();
  const bytes = new TextEncoder().encode('{"a":1}');
  const sha = sha256Hex(bytes);
  const crossed: string[] = [];
  const stop = onCrossing((c) => {
    if (c.site === MOUNTED_PLAN_WRITE) crossed.push(c.side);
  });
  try {
    const path = await writeMountedPlanFile(`${dir}/plans`, bytes, sha);
    assert.equal(path, `${dir}/plans/${sha}.json`);
    assert.deepEqual(await Deno.readFile(path), bytes);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o444);
    // an existing file with the right bytes is reused, not written again
    assert.equal(await writeMountedPlanFile(`${dir}/plans`, bytes, sha), path);
    assert.deepEqual(crossed, ["before", "after"]);
  } finally {
    stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an existing mounted plan that does not hash to its name is corruption", async () => {
  const dir = await Deno.makeTempDir();
  const sha = sha256Hex("x");
  try {
    await Deno.writeTextFile(`${dir}/${sha}.json`, "not x");
    await assert.rejects(
      () => writeMountedPlanFile(dir, new TextEncoder().encode("x"), sha),
      (e) => (e as SluiceError).code === "STATE_CORRUPT_MOUNTED_PLAN",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
