/**
 * The API reference check (part of `deno task check`): `deno doc --lint mod.ts` is clean (every
 * exported symbol documented, no public type referring to a private one), every exported
 * function, class and constant of `mod.ts` has an `@example`, and the examples of every module
 * that declares a public symbol type-check (`deno check --doc` on those modules, found from
 * `deno doc --json mod.ts`, so a new export is covered the day it is added).
 *
 *   deno run -A tools/doc_check.ts
 *
 * @module
 */

const ROOT = new URL("..", import.meta.url);
const MOD = new URL("mod.ts", ROOT).pathname;

interface DocDeclaration {
  kind: string;
  location: { filename: string; line: number };
  jsDoc?: { tags?: Array<{ kind: string }> };
}
interface DocSymbol {
  name: string;
  declarations: DocDeclaration[];
}

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The public symbols of mod.ts as `deno doc --json` reports them. */
export async function publicSymbols(): Promise<DocSymbol[]> {
  const r = await deno(["doc", "-q", "--json", MOD]);
  if (r.code !== 0) throw new Error(`deno doc --json failed:\n${r.stderr}`);
  const nodes = JSON.parse(r.stdout).nodes as Record<string, { symbols: DocSymbol[] }>;
  return Object.values(nodes).flatMap((n) => n.symbols);
}

/** Functions, classes and constants without an `@example` (`name (file:line)`). */
export function withoutExample(symbols: DocSymbol[]): string[] {
  const missing: string[] = [];
  for (const s of symbols) {
    for (const d of s.declarations) {
      if (!["function", "class", "variable"].includes(d.kind)) continue;
      if (!(d.jsDoc?.tags ?? []).some((t) => t.kind === "example")) {
        missing.push(
          `${s.name} (${d.location.filename.replace(ROOT.href, "")}:${d.location.line})`,
        );
      }
    }
  }
  return missing;
}

/** The modules that declare the public symbols (their examples are type-checked). */
export function declaringModules(symbols: DocSymbol[]): string[] {
  const files = new Set(symbols.flatMap((s) => s.declarations.map((d) => d.location.filename)));
  files.add(new URL("mod.ts", ROOT).href);
  return [...files].map((f) => new URL(f).pathname).sort();
}

if (import.meta.main) {
  const problems: string[] = [];
  const lint = await deno(["doc", "-q", "--lint", MOD]);
  if (lint.code !== 0) problems.push(`deno doc --lint mod.ts:\n${lint.stdout}${lint.stderr}`);
  const symbols = await publicSymbols();
  const missing = withoutExample(symbols);
  if (missing.length > 0) {
    problems.push(`exported without an @example:\n  ${missing.join("\n  ")}`);
  }
  const modules = declaringModules(symbols);
  const check = await deno(["check", "-q", "--doc", ...modules]);
  if (check.code !== 0) {
    problems.push(`examples that do not type-check:\n${check.stdout}${check.stderr}`);
  }
  if (problems.length > 0) {
    console.error(problems.join("\n\n"));
    Deno.exit(1);
  }
  console.log(
    `mod.ts: ${symbols.length} documented exports; examples of ${modules.length} modules type-check`,
  );
}
