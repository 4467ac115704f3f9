import assert from "node:assert/strict";
import { writeFileAtomic } from "./atomic_file.ts";

Deno.test("an atomic write replaces the file whole and leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plan.json`;
  await Deno.writeTextFile(path, "old content that is longer than the new one");
  await writeFileAtomic(path, new TextEncoder().encode("{}"), 0o444);
  assert.equal(await Deno.readTextFile(path), "{}");
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o444);
  const names = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  assert.deepEqual(names, ["plan.json"]);
  await Deno.remove(dir, { recursive: true });
});
