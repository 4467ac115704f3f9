/**
 * Private test helper: a temporary copy of the starter project, optionally edited.
 * @module
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { initProject } from "./starter.ts";

/** A starter project in a new temporary directory; `edits` replace whole files. */
export async function tempStarter(edits: Record<string, string> = {}): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-project-" });
  await initProject(dir);
  for (const [path, content] of Object.entries(edits)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}
