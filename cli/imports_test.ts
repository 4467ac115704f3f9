/**
 * The CLI renders the SDK and nothing else: every module under `cli/` (tests aside, which may
 * reach test support and internals) imports only `mod.ts`, other `cli/` modules, commander and
 * Node built-ins. commander is named fully qualified at `deno.json`'s version
 * (`npm:commander@15.1.0`), never by the bare name only the import map resolves, so
 * `deno run -A <checkout>/cli/main.ts` works from any directory without `--config` (as `mod.ts`
 * does, `lib/imports_test.ts`). And there is no import cycle among them (the output format lives
 * in `cli/output.ts`, not in `cli/main.ts`).
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { productModules } from "../testing/sources.ts";

const CLI = new URL("./", import.meta.url).pathname;
const ROOT = resolve(CLI, "..");
const MOD = join(ROOT, "mod.ts");
/** commander as deno.json's import map pins it (`npm:commander@<version>`). */
const COMMANDER: string = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).imports
  .commander;

/** Every module specifier a file imports or re-exports (static and dynamic). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/gms,
    /^\s*import\s+["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]);
  return found;
}

function allowed(file: string, spec: string): boolean {
  if (spec === COMMANDER || spec.startsWith("node:")) return true;
  if (!spec.startsWith(".")) return false;
  const target = resolve(dirname(file), spec);
  return target === MOD || (target.startsWith(CLI) && !target.endsWith("_test.ts"));
}

Deno.test("every module under cli/ imports only mod.ts, cli/ modules, commander and node:", async () => {
  const files = await productModules(CLI);
  assert.ok(files.length >= 8, `found only ${files.length} cli modules`);
  const offending: string[] = [];
  for (const file of files) {
    const specs = specifiers(await Deno.readTextFile(file));
    assert.ok(specs.length > 0, `${relative(ROOT, file)}: no import found (the scan is broken)`);
    for (const spec of specs) {
      if (!allowed(file, spec)) offending.push(`${relative(ROOT, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(offending, []);
});

/** Every import cycle of a graph, as `a → b → a` paths. */
function findCycles(edges: Map<string, string[]>): string[] {
  const state = new Map<string, "visiting" | "done">();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "visiting") {
      cycles.push([...path.slice(path.indexOf(f)), f].join(" → "));
      return;
    }
    state.set(f, "visiting");
    for (const t of edges.get(f) ?? []) visit(t, [...path, f]);
    state.set(f, "done");
  };
  for (const f of edges.keys()) visit(f, []);
  return cycles;
}

Deno.test("the cli/ modules import each other without a cycle", async () => {
  const edges = new Map<string, string[]>();
  for (const file of await productModules(CLI)) {
    const targets = specifiers(await Deno.readTextFile(file))
      .filter((s) => s.startsWith("."))
      .map((s) => relative(ROOT, resolve(dirname(file), s)))
      .filter((t) => t.startsWith("cli/"));
    edges.set(relative(ROOT, file), targets);
  }
  assert.ok(edges.get("cli/main.ts")?.includes("cli/commands/mod.ts"));
  assert.deepEqual(findCycles(edges), []);
});

Deno.test("the scan sees a forbidden import and a cycle when there is one", () => {
  assert.deepEqual(
    findCycles(new Map([["main", ["deploy"]], ["deploy", ["main"]], ["output", []]])),
    ["main → deploy → main"],
  );
  const file = join(CLI, "commands", "x.ts");
  assert.equal(allowed(file, "../../lib/runtime/session.ts"), false);
  assert.equal(allowed(file, "../../mod.ts"), true);
  assert.equal(allowed(file, "../output.ts"), true);
  assert.equal(allowed(file, "npm:dockerode"), false);
  assert.equal(allowed(file, COMMANDER), true);
  assert.match(COMMANDER, /^npm:commander@\d+\.\d+\.\d+$/);
  // the bare name resolves only through deno.json's import map; another version is a drift
  assert.equal(allowed(file, "commander"), false);
  assert.equal(allowed(file, "npm:commander@14.0.0"), false);
  assert.deepEqual(
    specifiers('import { a } from "../../lib/x.ts";\nexport type {\n  B,\n} from "./y.ts";\n'),
    ["../../lib/x.ts", "./y.ts"],
  );
});
