/**
 * The layers of lib/ as data that runs: each folder (or top-level file) has a floor, and every
 * import of a lib module names a module of its own folder or of a lower floor — no circle between
 * folders, no arrow running back up. Outside-world I/O (processes, HTTP, sockets, the Docker,
 * Kafka and PostgreSQL clients) happens only under `providers/` and in the state backends'
 * primitives, each behind its port.
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { codeLines, productModules } from "../testing/sources.ts";

const LIB = new URL("./", import.meta.url).pathname;

/** Bottom up: a module may import its own folder and anything on a lower floor. */
const FLOORS: readonly (readonly string[])[] = [
  ["errors.ts", "secrets.ts", "version.ts"],
  ["fault"], // the fault switch: a leaf mechanism every durable step crosses
  ["fs", "expr"],
  ["artifact"],
  ["protocol", "project", "lineage"], // journey tables and the inventory; the project; lineage
  ["providers"], // the ports to Docker, Kafka, Connect, Git, lineage sinks, the runner build
  ["state"],
  ["validation"],
  ["plan"],
  ["runtime"],
  ["review", "version_report.ts"],
  ["sdk"],
];

/** Where the outside world may be reached directly (everything else goes through a port). */
const IO_ALLOWED = ["providers/", "state/postgres/pg_primitive.ts"];
const IO =
  /\bnew Deno\.Command\b|\bfetch\(|\bDeno\.(connect|listen)\w*\(|from "(npm:)?(pg|dockerode|@platformatic\/kafka)(@[^"/]+)?"/;

function floorOf(path: string): number {
  const top = path.split("/")[0];
  const i = FLOORS.findIndex((f) => f.includes(top));
  if (i < 0) throw new Error(`lib/${path}: its folder ${top} has no floor in FLOORS`);
  return i;
}

function importsOf(text: string): Array<{ line: number; spec: string }> {
  const out: Array<{ line: number; spec: string }> = [];
  const lines = codeLines(text);
  for (const { line, code } of lines) {
    for (const m of code.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      out.push({ line, spec: m[1] });
    }
  }
  return out;
}

Deno.test("lib/: every import names its own folder or a lower floor", async () => {
  const problems: string[] = [];
  let arrows = 0;
  for (const file of await productModules(LIB)) {
    const from = relative(LIB, file);
    const text = await Deno.readTextFile(file);
    for (const { line, spec } of importsOf(text)) {
      const to = relative(LIB, normalize(join(dirname(file), spec)));
      if (to.startsWith("..")) continue; // outside lib (none today; not a layer question)
      arrows++;
      if (to.split("/")[0] === from.split("/")[0]) continue;
      if (floorOf(to) >= floorOf(from)) {
        problems.push(
          `lib/${from}:${line} imports lib/${to}, on floor ${floorOf(to)} ≥ ${floorOf(from)}`,
        );
      }
    }
  }
  assert.ok(arrows > 300, `only ${arrows} imports read: the scan is broken`);
  assert.deepEqual(problems, []);
});

Deno.test("lib/: the outside world is reached only under providers/ and the state backends", async () => {
  const problems: string[] = [];
  let seen = 0;
  for (const file of await productModules(LIB)) {
    const from = relative(LIB, file);
    for (const { line, code } of codeLines(await Deno.readTextFile(file))) {
      if (!IO.test(code)) continue;
      seen++;
      if (!IO_ALLOWED.some((a) => from.startsWith(a))) {
        problems.push(`lib/${from}:${line}: ${code.trim()}`);
      }
    }
  }
  assert.ok(seen > 0, "no I/O found anywhere: the scan is broken");
  assert.deepEqual(problems, []);
});

Deno.test("the layer check finds an arrow running back up and I/O outside the providers", () => {
  assert.ok(floorOf("state/engine.ts") > floorOf("fault/site.ts"));
  assert.ok(floorOf("fault/site.ts") < floorOf("protocol/inventory.ts"));
  assert.deepEqual(importsOf(' * import { x } from "./y.ts";\nimport { z } from "../w.ts";'), [
    { line: 2, spec: "../w.ts" },
  ]);
  assert.ok(IO.test('  const r = await fetch(url, { method: "POST" });'));
  assert.ok(IO.test('import pg from "pg";'));
  assert.ok(IO.test('import pg from "npm:pg@8.23.1";'));
  assert.ok(!IO.test('import { x } from "npm:pgpass@1.0.5";'));
  assert.ok(!IO.test("const fetched = refetch;"));
});
