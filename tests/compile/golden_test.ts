/**
 * Golden artifact of the starter project: the committed canonical bytes and their sha256
 * (`tests/golden/starter/`, checkable with `sha256sum -c`) are
 * what `sluice compile` must produce for `sluice init`'s project on every run and machine.
 * Regenerate deliberately (after an intended format change) with
 * `UPDATE_GOLDEN=1 deno test -A tests/compile/golden_test.ts`.
 */
import { strictEqual } from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { sha256Hex } from "../../lib/artifact/canonical.ts";
import { compile } from "../../lib/project/compile.ts";
import { loadProject } from "../../lib/project/load.ts";
import { initProject } from "../../lib/project/starter.ts";

const GOLDEN = new URL("../golden/starter/", import.meta.url);

Deno.test("the starter compiles to the committed golden artifact bytes and sha256", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-golden-" });
  await initProject(dir);
  const { artifacts } = compile(await loadProject(dir));
  strictEqual(artifacts.length, 1);
  const [a] = artifacts;
  // ".golden", not ".json": deno fmt would pretty-print a .json file and break the bytes
  const jsonUrl = new URL(`${a.model}.artifact.json.golden`, GOLDEN);
  const shaUrl = new URL(`${a.model}.artifact.sha256`, GOLDEN);
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    await writeFile(jsonUrl, a.canonical);
    await writeFile(shaUrl, `${a.sha256}  ${a.model}.artifact.json.golden\n`);
  }
  const golden = await readFile(jsonUrl);
  const goldenSha = (await readFile(shaUrl, "utf8")).split(" ")[0];
  strictEqual(a.canonical, new TextDecoder().decode(golden));
  strictEqual(sha256Hex(golden), goldenSha, "golden sha256 file matches golden bytes");
  strictEqual(a.sha256, goldenSha);
});
