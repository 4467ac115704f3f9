// Every blocker a journey can give has a way out in the runbook: the codes the replacement
// table, the create table and the operator's commands declare, each in a row of
// docs/runbook.md's blocker tables with a non-empty "way out" column.
import assert from "node:assert/strict";
import { ERROR_CODES } from "../errors.ts";
import { CREATE_TABLE } from "./create.ts";
import { OPERATOR_BLOCKERS } from "./operator.ts";
import { DAY_TWO_BLOCKERS } from "./day_two.ts";
import { EVERY_STAGE_BLOCKERS, REPLACEMENT_TABLE } from "./replacement.ts";

const RUNBOOK = new URL("../../docs/runbook.md", import.meta.url);

/** Codes named in a blocker table row, with that row's last cell (the way out). */
async function runbookEntries(): Promise<Map<string, string>> {
  const text = await Deno.readTextFile(RUNBOOK);
  const section = text.slice(text.indexOf("## 5. Blockers and their ways out"));
  const out = new Map<string, string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const cells = line.split("|").map((c) => c.trim()).filter((c) => c !== "");
    const wayOut = cells.at(-1)!;
    for (const m of cells[0].matchAll(/`([A-Z_]+)`/g)) out.set(m[1], wayOut);
  }
  return out;
}

Deno.test("every blocker the tables and the operator's commands declare has a runbook way out", async () => {
  const declared = new Set<string>([
    ...EVERY_STAGE_BLOCKERS,
    ...OPERATOR_BLOCKERS,
    ...DAY_TWO_BLOCKERS,
  ]);
  for (const r of REPLACEMENT_TABLE) for (const b of r.blockers) declared.add(b);
  for (const r of CREATE_TABLE) for (const b of r.blockers) declared.add(b);
  assert.ok(declared.size > 30, `only ${declared.size} declared codes`);
  const entries = await runbookEntries();
  const missing = [...declared].filter((c) => !entries.has(c)).sort();
  assert.deepEqual(missing, [], `codes without a runbook entry: ${missing.join(", ")}`);
  for (const c of declared) {
    assert.ok(entries.get(c)!.length >= 10, `${c}: the way out is empty`);
  }
});

Deno.test("every BLOCKED_* code declared in ERROR_CODES has a runbook way out", async () => {
  const entries = await runbookEntries();
  const missing = Object.keys(ERROR_CODES).filter((c) =>
    c.startsWith("BLOCKED_") && !entries.has(c)
  ).sort();
  assert.deepEqual(missing, [], `blockers without a runbook entry: ${missing.join(", ")}`);
});
