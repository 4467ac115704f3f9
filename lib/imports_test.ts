/**
 * The SDK imports from anywhere (issue 30, C104's installed import): `mod.ts` and every module of
 * lib/ name their npm packages fully qualified (`npm:pg@8.23.1`), never by a bare name that only
 * the project's import map resolves, so a script outside the checkout imports `mod.ts` by URL
 * with no `--config`. The versions stay written once: each qualified specifier must be exactly
 * the one `deno.json`'s import map gives that package (`@ts-types` directives included).
 * (`deno.json`'s lint turns off `no-import-prefix`, the rule that asks for the bare names this
 * test refuses.)
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { productModules } from "../testing/sources.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const LIB = join(ROOT, "lib");

/** One module specifier written in a module, with its line. */
interface Specifier {
  line: number;
  spec: string;
}

/**
 * The specifiers of a module's code: `import`/`export ... from "x"`, `import("x")`, a bare
 * `import "x"`, and `// @ts-types="x"` directives (JSDoc lines, whose examples import too, are
 * left out).
 */
function specifiersOf(text: string): Specifier[] {
  const out: Specifier[] = [];
  text.split("\n").forEach((code, i) => {
    const line = i + 1;
    const types = /^\s*\/\/\s*@ts-types="([^"]+)"/.exec(code);
    if (types) out.push({ line, spec: types[1] });
    if (/^\s*(\*|\/\/|\/\*)/.test(code)) return;
    for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)"([^"]+)"/g)) {
      out.push({ line, spec: m[1] });
    }
  });
  return out;
}

/** `npm:name@version[/path]` split, or null when `spec` is not a qualified npm specifier. */
function npmPackageOf(spec: string): { name: string; version: string } | null {
  const m = /^npm:((?:@[^/@]+\/)?[^/@]+)@([^/]+)(?:\/.*)?$/.exec(spec);
  return m ? { name: m[1], version: m[2] } : null;
}

/**
 * What is wrong with one module's specifiers, given deno.json's import map: a bare specifier, an
 * npm package without a version or not in the map, a version other than the map's, a relative
 * import of a module outside lib/ (its own imports would go unread here).
 */
function problemsOf(
  file: string,
  specs: Specifier[],
  importMap: Record<string, string>,
  roots: readonly string[] = [LIB],
): string[] {
  const problems: string[] = [];
  const where = (s: Specifier) => `${relative(ROOT, file)}:${s.line} "${s.spec}"`;
  for (const s of specs) {
    if (s.spec.startsWith("./") || s.spec.startsWith("../")) {
      const target = normalize(join(dirname(file), s.spec));
      const code = /\.(ts|js|mjs|tsx|jsx)$/.test(target);
      if (code && roots.every((root) => relative(root, target).startsWith(".."))) {
        problems.push(
          `${where(s)}: imports a module outside ${
            roots.map((r) => `${relative(ROOT, r)}/`).join(", ")
          }`,
        );
      }
    } else if (s.spec.startsWith("node:")) {
      continue;
    } else if (s.spec.startsWith("npm:")) {
      const pkg = npmPackageOf(s.spec);
      if (!pkg) {
        problems.push(`${where(s)}: an npm package without its exact version`);
        continue;
      }
      const mapped = importMap[pkg.name];
      if (mapped === undefined) {
        problems.push(`${where(s)}: ${pkg.name} is not in deno.json's imports`);
      } else if (mapped !== `npm:${pkg.name}@${pkg.version}`) {
        problems.push(`${where(s)}: deno.json's imports say ${mapped}`);
      }
    } else {
      problems.push(`${where(s)}: resolves only through deno.json's import map`);
    }
  }
  return problems;
}

async function importMap(): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  return config.imports as Record<string, string>;
}

Deno.test("mod.ts and lib/ import npm packages qualified, at deno.json's versions", async () => {
  const map = await importMap();
  const problems: string[] = [];
  const packages = new Set<string>();
  let relatives = 0;
  for (const file of [join(ROOT, "mod.ts"), ...await productModules(LIB)]) {
    const specs = specifiersOf(await Deno.readTextFile(file));
    problems.push(...problemsOf(file, specs, map));
    for (const s of specs) {
      const pkg = npmPackageOf(s.spec);
      if (pkg) packages.add(pkg.name);
      if (s.spec.startsWith(".")) relatives++;
    }
  }
  // positive controls: the scan reads the graph and finds the packages lib/ is known to use
  assert.ok(relatives > 300, `only ${relatives} relative imports read: the scan is broken`);
  for (const name of ["pg", "@types/pg", "dockerode", "@types/dockerode", "yaml"]) {
    assert.ok(packages.has(name), `${name} not found among ${[...packages].join(", ")}`);
  }
  assert.deepEqual(problems, []);
});

Deno.test("testing.ts and the harness modules it reaches import npm packages qualified too", async () => {
  const map = await importMap();
  const problems: string[] = [];
  const HARNESS = join(ROOT, "harness");
  const seen = new Set<string>();
  const queue = [join(ROOT, "testing.ts")];
  const packages = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const specs = specifiersOf(await Deno.readTextFile(file));
    problems.push(...problemsOf(file, specs, map, [HARNESS, LIB]));
    for (const s of specs) {
      const pkg = npmPackageOf(s.spec);
      if (pkg) packages.add(pkg.name);
      if (!s.spec.startsWith(".")) continue;
      const target = normalize(join(dirname(file), s.spec));
      // lib/ is the test above's; a harness module's own imports are read here
      if (!relative(HARNESS, target).startsWith("..") && target.endsWith(".ts")) queue.push(target);
    }
  }
  // positive controls: the walk reached the broker's builder and its container library
  assert.ok(seen.has(join(HARNESS, "env.ts")), [...seen].join(", "));
  assert.ok(packages.has("testcontainers"), [...packages].join(", "));
  assert.deepEqual(problems, []);
});

Deno.test("the specifier check finds a bare name, a drifted version and an unversioned package", () => {
  const map = { pg: "npm:pg@8.23.1", "@platformatic/kafka": "npm:@platformatic/kafka@2.12.1" };
  const text = [
    'import pg from "pg";',
    'import { Admin } from "npm:@platformatic/kafka@2.12.0";',
    '// @ts-types="npm:@types/pg@8.23.1"',
    'import pg2 from "npm:pg";',
    'const m = await import("npm:pg@8.23.1/lib/index.js");',
    'export { x } from "../../harness/env.ts";',
    ' * import { y } from "yaml";',
    'import assert from "node:assert/strict";',
    'import POM from "../runner/pom.xml" with { type: "text" };',
  ].join("\n");
  const file = join(LIB, "providers", "x.ts");
  assert.deepEqual(specifiersOf(text).map((s) => s.spec), [
    "pg",
    "npm:@platformatic/kafka@2.12.0",
    "npm:@types/pg@8.23.1",
    "npm:pg",
    "npm:pg@8.23.1/lib/index.js",
    "../../harness/env.ts",
    "node:assert/strict",
    "../runner/pom.xml",
  ]);
  assert.deepEqual(problemsOf(file, specifiersOf(text), map), [
    'lib/providers/x.ts:1 "pg": resolves only through deno.json\'s import map',
    'lib/providers/x.ts:2 "npm:@platformatic/kafka@2.12.0": deno.json\'s imports say npm:@platformatic/kafka@2.12.1',
    'lib/providers/x.ts:3 "npm:@types/pg@8.23.1": @types/pg is not in deno.json\'s imports',
    'lib/providers/x.ts:4 "npm:pg": an npm package without its exact version',
    'lib/providers/x.ts:6 "../../harness/env.ts": imports a module outside lib/',
  ]);
});
