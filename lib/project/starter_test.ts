import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SluiceError } from "../errors.ts";
import { decodeRecord } from "../expr/decode.ts";
import { loadProject } from "./load.ts";
import { initProject } from "./starter.ts";

Deno.test("init writes the starter; a dry run writes nothing", async () => {
  const dir = await Deno.makeTempDir();
  const dry = await initProject(join(dir, "p"), { dryRun: true });
  strictEqual(dry.dry_run, true);
  deepStrictEqual(dry.files.map((f) => f.path), [
    "sluice.yaml",
    "models/eligible_orders.sql",
    "samples/raw_orders.jsonl",
    ".gitignore",
  ]);
  await rejects(Deno.stat(join(dir, "p")));
  const done = await initProject(join(dir, "p"));
  deepStrictEqual(done.files.map((f) => f.action), ["create", "create", "create", "create"]);
});

Deno.test("init never overwrites without force", async () => {
  const dir = await Deno.makeTempDir();
  await writeFile(join(dir, "sluice.yaml"), "mine");
  await rejects(initProject(dir), (e: unknown) => {
    strictEqual((e as SluiceError).code, "PROJECT_EXISTS");
    deepStrictEqual((e as SluiceError).evidence?.existing, ["sluice.yaml"]);
    return true;
  });
  strictEqual(await readFile(join(dir, "sluice.yaml"), "utf8"), "mine");
  await rejects(Deno.stat(join(dir, "models")));
  const forced = await initProject(dir, { force: true });
  strictEqual(forced.files[0].action, "overwrite");
  strictEqual((await readFile(join(dir, "sluice.yaml"), "utf8")).includes("project: orders"), true);
});

Deno.test("the starter's samples decode strictly against raw_orders", async () => {
  const dir = await Deno.makeTempDir();
  await initProject(dir);
  const project = await loadProject(dir);
  const lines = (await readFile(join(dir, "samples/raw_orders.jsonl"), "utf8")).trim().split("\n");
  for (const line of lines) {
    const { key, value } = JSON.parse(line);
    strictEqual(typeof key, "string");
    const decoded = decodeRecord(JSON.stringify(value), project.models[0].source.schema);
    strictEqual(decoded.ok, true, line);
  }
});
