import assert from "node:assert/strict";
import { faultSite, onCrossing } from "../fault/site.ts";
import { atomicReplace, durableRemove, ensureDir, exclusiveCreate } from "./atomic_write.ts";

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("an atomic replace writes the file whole, with its mode, and leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/plan.json`;
    await Deno.writeTextFile(path, "old content that is longer than the new one");
    await atomicReplace(path, new TextEncoder().encode("{}"), { mode: 0o444 });
    assert.equal(await Deno.readTextFile(path), "{}");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o444);
    await atomicReplace(`${dir}/text.sql`, "SELECT 1");
    assert.equal(await Deno.readTextFile(`${dir}/text.sql`), "SELECT 1");
    assert.deepEqual(await names(dir), ["plan.json", "text.sql"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failed atomic replace leaves what was there and removes its temporary file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // a non-empty directory in the target's place: the rename fails after the temp file was
    // written and fsynced
    await Deno.mkdir(`${dir}/b.json`);
    await Deno.writeTextFile(`${dir}/b.json/keep`, "x");
    await assert.rejects(atomicReplace(`${dir}/b.json`, "new"));
    assert.equal(await Deno.readTextFile(`${dir}/b.json/keep`), "x");
    assert.deepEqual(await names(dir), ["b.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exclusive create never overwrites, durable remove accepts a missing file, ensureDir nests", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await ensureDir(`${dir}/a/b/c`);
    assert.ok((await Deno.stat(`${dir}/a/b/c`)).isDirectory);
    await ensureDir(`${dir}/a/b/c`); // existing: fine
    const path = `${dir}/a/id.json`;
    assert.equal(await exclusiveCreate(path, "first"), true);
    assert.equal(await exclusiveCreate(path, "second"), false);
    assert.equal(await Deno.readTextFile(path), "first");
    assert.deepEqual(await names(`${dir}/a`), ["b", "id.json"]);
    await durableRemove(path);
    await durableRemove(path);
    assert.deepEqual(await names(`${dir}/a`), ["b"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a write given sites crosses them in order: temp, rename, directory fsync", async () => {
  const site = (step: string) =>
    faultSite({
      name: `test.atomic_write.${step}`,
      kind: "state",
      description: `test site of the ${step} step`,
      where: import.meta.url,
    });
  const sites = { temp: site("temp"), rename: site("rename"), dirsync: site("dirsync") };
  const seen: string[] = [];
  const stop = onCrossing((c) => {
    if (c.site.name.startsWith("test.atomic_write.")) seen.push(`${c.site.name}:${c.side}`);
  });
  const dir = await Deno.makeTempDir();
  try {
    await atomicReplace(`${dir}/doc.json`, "{}", { sites });
    await atomicReplace(`${dir}/plain.json`, "{}"); // no sites: nothing crossed
  } finally {
    stop();
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(seen, [
    "test.atomic_write.temp:before",
    "test.atomic_write.temp:after",
    "test.atomic_write.rename:before",
    "test.atomic_write.rename:after",
    "test.atomic_write.dirsync:before",
    "test.atomic_write.dirsync:after",
  ]);
});
