/**
 * `deno task verify`: check every `verification/*.json` evidence file. Nothing recorded is taken
 * on trust:
 *
 * - the file validates against `verification/schema.json`;
 * - **provenance**: the recorded commit exists and is an ancestor of `HEAD`, its committer time is
 *   Git's, the run started after it and ended (an unfinished run is not evidence), the file's
 *   time fields agree with each other; a dirty tree is refused unless `--allow-dirty`; every case
 *   carries the file's run ID and lies inside the run's window (no mixed runs);
 * - **completeness**: the cases are exactly the probe's case list derived from the code (the
 *   fault inventory, the rejection catalogue, the declared disruptions, the random-kill chains);
 *   a selection (`--only`, `--backend`) makes a file partial, refused unless `--allow-partial`;
 * - **verdicts recomputed**: every assertion's verdict is recomputed from its kind, expected and
 *   actual (OpenLineage events re-validated against the official schemas), then each case's
 *   verdict and the file's summary; any recorded value that differs is an error;
 * - **required checks**: each case holds the checks its kind requires, with the required kind and
 *   the values the code pins (the armed site, the blocker code, the exit status, ...), and its
 *   assertions agree with its history and samples;
 * - no secret appears anywhere: no line the probes' redaction would change (a URL's
 *   credentials, a secret-named field's value, a secret `KEY=value`).
 *
 *   deno task verify [--allow-dirty] [--allow-partial] [FILE...]
 *
 * Without FILE and `SLUICE_VERIFICATION_DIR`, it checks the repository's `verification/`: the last
 * full-tier run of every probe must be there (`committedSetErrors`). A file whose commit is older
 * than a change under lib/, runner/, probes/ or harness/ still verifies, with a warning that
 * names it "stale since COMMIT" ({@link staleSince}).
 *
 * Every message names the file, the case and the assertion it is about.
 * @module
 */
import {
  type Assertion,
  type CaseEvidence,
  caseVerdict,
  judge,
  redactEvidence,
  stableJson,
  stoppedSample,
  summarize,
} from "../probes/evidence.ts";
import {
  expectedCaseIds,
  inventory,
  PROBE_FILES,
  type ProbeName,
  randomKillCases,
  REJECTIONS,
  requiredChecks,
  selectedCaseIds,
  stopsRunner,
} from "../probes/catalogue.ts";
import type { Provenance } from "../probes/provenance.ts";
import { loadRunEventValidator, type RunEventValidator } from "../lib/lineage/validate.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DIR = Deno.env.get("SLUICE_VERIFICATION_DIR") ?? `${ROOT}verification`;
const SCHEMA = `${ROOT}verification/schema.json`;

type Schema = Record<string, unknown>;

const SUPPORTED = new Set([
  "$schema",
  "$id",
  "$defs",
  "$ref",
  "title",
  "description",
  "type",
  "const",
  "enum",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "minimum",
  "pattern",
  "format",
]);

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === "number" && actual === "integer");
}

/**
 * Validate `value` against `schema` (the keywords the evidence schema uses; an unsupported
 * keyword is an error, never ignored). Returns error messages, empty when valid.
 */
export function validate(root: Schema, schema: Schema, value: unknown, path = "$"): string[] {
  const errors: string[] = [];
  for (const k of Object.keys(schema)) {
    if (!SUPPORTED.has(k)) errors.push(`${path}: schema keyword ${k} is not supported`);
  }
  if (typeof schema.$ref === "string") {
    const m = /^#\/\$defs\/(.+)$/.exec(schema.$ref);
    const target = m ? (root.$defs as Record<string, Schema>)?.[m[1]] : undefined;
    if (!target) return [`${path}: unresolvable $ref ${schema.$ref}`];
    return validate(root, target, value, path);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.some((t) => typeMatches(value, t))) {
      return [`${path}: expected ${types.join("|")}, got ${typeOf(value)}`];
    }
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) {
      errors.push(`${path}: shorter than ${schema.minLength}`);
    }
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      errors.push(`${path}: does not match ${schema.pattern}`);
    }
    if (schema.format === "date-time" && Number.isNaN(Date.parse(value))) {
      errors.push(`${path}: not a date-time`);
    }
  }
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum) {
    errors.push(`${path}: below ${schema.minimum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      errors.push(`${path}: fewer than ${schema.minItems} items`);
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      errors.push(`${path}: more than ${schema.maxItems} items`);
    }
    if (schema.items && typeof schema.items === "object") {
      value.forEach((x, i) =>
        errors.push(...validate(root, schema.items as Schema, x, `${path}[${i}]`))
      );
    }
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? []) {
      if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    }
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) errors.push(...validate(root, props[k], v, `${path}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected ${k}`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
        errors.push(...validate(root, schema.additionalProperties as Schema, v, `${path}.${k}`));
      }
    }
  }
  return errors;
}

/** An evidence file (schema version 2). */
export interface EvidenceFile {
  probe: ProbeName;
  schema_version: 2;
  generated_at: string;
  duration_ms: number;
  provenance: Provenance;
  fault_inventory: { count: number; sites: Array<{ name: string; kind: string }> };
  cases: CaseEvidence[];
  summary: Record<string, number>;
}

/** What the semantic checks need from outside the file. */
export interface VerifyContext {
  allowDirty: boolean;
  allowPartial: boolean;
  /** Git's view of a commit: its committer time and whether it is an ancestor of HEAD. */
  git: (commit: string) => Promise<{ exists: boolean; time: string | null; ancestor: boolean }>;
  now: () => number;
  conforms: RunEventValidator;
}

/** Slack for clocks and rounding between the run's and the cases' timestamps. */
const SLACK_MS = 2_000;

function describe(a: Assertion): string {
  return `assertion ${a.check} (${a.name})`;
}

function within(t: string, from: number, to: number): boolean {
  const x = Date.parse(t);
  return !Number.isNaN(x) && x >= from - SLACK_MS && x <= to + SLACK_MS;
}

function provenanceErrors(
  e: EvidenceFile,
  ctx: VerifyContext,
  git: { exists: boolean; time: string | null; ancestor: boolean },
): string[] {
  const out: string[] = [];
  const p = e.provenance;
  if (!git.exists) out.push(`provenance: commit ${p.commit} does not exist in this repository`);
  else if (!git.ancestor) {
    out.push(`provenance: commit ${p.commit} is not an ancestor of HEAD (evidence of other code)`);
  }
  if (git.time !== null && Date.parse(git.time) !== Date.parse(p.commit_time)) {
    out.push(`provenance: commit_time ${p.commit_time} is not the commit's ${git.time}`);
  }
  const started = Date.parse(p.started_at);
  if (git.time !== null && started < Date.parse(git.time) - SLACK_MS) {
    out.push(
      `provenance: started_at ${p.started_at} is before commit ${p.commit} existed (${git.time})`,
    );
  }
  if (p.ended_at === null) out.push("provenance: the run did not finish (ended_at is null)");
  const ended = p.ended_at === null ? NaN : Date.parse(p.ended_at);
  if (!Number.isNaN(ended)) {
    if (ended < started) out.push(`provenance: ended_at ${p.ended_at} is before started_at`);
    if (ended > ctx.now() + 60_000) out.push(`provenance: ended_at ${p.ended_at} is in the future`);
    if (e.duration_ms !== ended - started) {
      out.push(`duration_ms ${e.duration_ms} is not ended_at - started_at (${ended - started})`);
    }
  }
  if (e.generated_at !== p.started_at) {
    out.push(`generated_at ${e.generated_at} is not provenance.started_at ${p.started_at}`);
  }
  if (p.dirty && !p.allow_dirty) {
    out.push("provenance: a dirty tree is recorded without allow_dirty (the probe must refuse it)");
  }
  if (p.dirty && !ctx.allowDirty) {
    out.push(
      `provenance: recorded from a dirty tree (${
        p.dirty_paths.slice(0, 3).join(", ")
      }); refused without --allow-dirty`,
    );
  }
  return out;
}

function caseIdErrors(probe: ProbeName, c: CaseEvidence): string[] {
  const out: string[] = [];
  const at = `case ${c.id}`;
  if (c.kind !== PROBE_FILES[probe]) {
    out.push(`${at}: kind ${c.kind} does not belong in ${probe}`);
  }
  switch (c.kind) {
    case "matrix":
      if (c.id !== `${c.boundary}:${c.side}:${c.backend}`) {
        out.push(`${at}: id does not match its site ${c.boundary}:${c.side} on ${c.backend}`);
      }
      break;
    case "rejection": {
      const spec = REJECTIONS.find((r) => `${r.name}:${c.backend}` === c.id);
      if (spec && c.params.code !== spec.code) {
        out.push(`${at}: params.code ${c.params.code} is not the catalogue's ${spec.code}`);
      }
      break;
    }
    case "disruption":
      if (!c.id.endsWith(`:${c.backend}`)) {
        out.push(`${at}: id does not match backend ${c.backend}`);
      }
      break;
    case "random-kill": {
      const k = randomKillCases().find((x) => x.id === c.id);
      if (k && (c.params.index !== k.index || c.backend !== k.backend)) {
        out.push(
          `${at}: params.index/backend do not match the code's case ${k.index}/${k.backend}`,
        );
      }
      break;
    }
  }
  return out;
}

/** Cross-checks between a case's assertions, its history and its samples. */
function consistencyErrors(c: CaseEvidence): string[] {
  const out: string[] = [];
  const at = `case ${c.id}`;
  const find = (check: string) => c.assertions.filter((a) => a.check === check);
  for (
    const a of [
      ...find("fault.killed_at_site"),
      ...find("fault.pre_operator_kill"),
      ...find("rejection.stopped_at_site"),
    ]
  ) {
    const x = a.actual as { process?: string; signal?: string; fired?: string | null };
    const site = (a.expected as { site?: string }).site;
    const proc = x?.process;
    const invoked = c.history.find((h) =>
      h.process === proc && h.type === "invoke" &&
      (h.value as { fault?: string } | null)?.fault === site
    );
    const ended = c.history.find((h) =>
      h.process === proc && h.type !== "invoke" &&
      (h.value as { signal?: string } | null)?.signal === x?.signal &&
      (h.value as { fired?: string | null } | null)?.fired === (x?.fired ?? null)
    );
    if (!invoked || !ended) {
      out.push(
        `${at}: ${
          describe(a)
        }: the history has no process ${proc} armed at ${site} that ended as recorded`,
      );
    }
  }
  const offsets = c.samples.map((s) => s.offsets);
  for (const a of find("offsets.monotonic")) {
    const chain = a.actual as unknown[];
    if (!Array.isArray(chain) || stableJson(chain.slice(1, -1)) !== stableJson(offsets)) {
      out.push(
        `${at}: ${describe(a)}: the vectors between first and last are not the case's samples`,
      );
    }
  }
  const stopped = c.samples.filter(stoppedSample).map((s) => s.offsets);
  for (
    const a of [
      ...find("offsets.stopped_equal_close"),
      ...find("offsets.stopped_close_or_retained"),
    ]
  ) {
    if (stableJson(a.actual) !== stableJson(stopped)) {
      out.push(`${at}: ${describe(a)}: the list is not the samples taken while stopped`);
    }
  }
  if (c.kind === "matrix" && stopsRunner(`${c.boundary}:${c.side}`) && stopped.length === 0) {
    out.push(
      `${at}: armed in the stopped window but no sample was taken while the runner was stopped`,
    );
  }
  return out;
}

/** Every check beyond the schema. Pure except for `ctx.git`. */
export async function semanticErrors(e: EvidenceFile, ctx: VerifyContext): Promise<string[]> {
  const errors: string[] = [];
  if (!(e.probe in PROBE_FILES)) return [`probe ${e.probe} is not one of the code's probes`];
  const inv = inventory();
  if (stableJson(inv) !== stableJson(e.fault_inventory)) {
    errors.push(
      `fault inventory ${e.fault_inventory.sites.map((s) => s.name).join(",")} is not the code's ${
        inv.sites.map((s) => s.name).join(",")
      }`,
    );
  }
  errors.push(...provenanceErrors(e, ctx, await ctx.git(e.provenance.commit)));
  const p = e.provenance;
  const from = Date.parse(p.started_at);
  const to = p.ended_at === null ? ctx.now() : Date.parse(p.ended_at);

  // completeness against the code
  // a tier is a complete case list of its own; a narrower selection makes the file partial
  const partial = Object.keys(p.selection).some((k) => k !== "tier");
  if (partial && !ctx.allowPartial) {
    errors.push(
      `partial run (selection ${JSON.stringify(p.selection)}): refused without --allow-partial`,
    );
  }
  const all = expectedCaseIds(e.probe);
  const expected = selectedCaseIds(e.probe, p.selection);
  const seen = new Set<string>();
  for (const id of e.cases.map((c) => c.id)) {
    if (seen.has(id)) errors.push(`case ${id}: recorded twice`);
    seen.add(id);
    if (!all.includes(id)) errors.push(`case ${id}: not in the code's case list of ${e.probe}`);
    else if (!expected.includes(id)) {
      errors.push(`case ${id}: not in the recorded selection ${JSON.stringify(p.selection)}`);
    }
  }
  for (const id of expected) if (!seen.has(id)) errors.push(`missing case ${id}`);

  for (const c of e.cases) {
    const at = `case ${c.id}`;
    if (c.run_id !== p.run_id) {
      errors.push(`${at}: run ${c.run_id} is not this file's run ${p.run_id}`);
    }
    if (
      !within(c.started_at, from, to) || Date.parse(c.started_at) + c.duration_ms > to + SLACK_MS
    ) {
      errors.push(`${at}: started ${c.started_at} (${c.duration_ms} ms) outside the run's window`);
    }
    const late = c.history.find((h) => !within(h.time, from, to));
    if (late) {
      errors.push(
        `${at}: history entry ${late.process}/${late.f} at ${late.time} is outside the run`,
      );
    }
    errors.push(...caseIdErrors(e.probe, c));
    // every verdict recomputed
    for (const [list, label] of [[c.setup, "setup"], [c.assertions, "evidence"]] as const) {
      for (const a of list) {
        const v = judge(a, ctx.conforms);
        if (v.ok !== a.ok) {
          errors.push(
            `${at}: ${label} ${describe(a)}: recorded ok=${a.ok} but ${a.kind} gives ${v.ok}${
              v.why ? ` (${v.why})` : ""
            }`,
          );
        } else if (!v.ok) errors.push(`${at} FAILED: ${label} ${describe(a)}: ${v.why}`);
      }
    }
    // a case that ran to its end has evidence; one that stopped on an error is reported by it
    // (below) whatever it recorded, so that its error is shown, not a malformed file
    if (c.error === null && c.assertions.length === 0) errors.push(`${at}: no assertion recorded`);
    // required checks with their kinds and pinned values
    for (const r of c.error === null ? requiredChecks(c) : []) {
      const found = c.assertions.filter((a) => a.check === r.check);
      if (found.length === 0) {
        errors.push(`${at}: missing required assertion ${r.check} (${r.kind})`);
        continue;
      }
      for (const a of found) {
        if (a.kind !== r.kind) {
          errors.push(`${at}: ${describe(a)} has kind ${a.kind}; the code requires ${r.kind}`);
        }
        const why = r.pin?.(a, c) ?? null;
        if (why) errors.push(`${at}: ${describe(a)}: ${why}`);
      }
    }
    for (const a of c.assertions) {
      if (a.check.startsWith("setup.") || c.setup.some((s) => s.check === a.check)) {
        errors.push(`${at}: setup check ${a.check} is counted as evidence`);
      }
    }
    for (const s of c.setup) {
      if (!s.check.startsWith("setup.")) {
        errors.push(`${at}: setup ${describe(s)} is not a setup check (setup.*)`);
      }
    }
    errors.push(...consistencyErrors(c));
    const verdict = caseVerdict({
      error: c.error,
      setup: c.setup.map((a) => ({ ...a, ok: judge(a, ctx.conforms).ok })),
      assertions: c.assertions.map((a) => ({ ...a, ok: judge(a, ctx.conforms).ok })),
    });
    if (verdict !== c.ok) errors.push(`${at}: ok=${c.ok} but its assertions say ${verdict}`);
    if (!verdict && c.error) errors.push(`${at} FAILED: error: ${c.error.split("\n")[0]}`);
  }
  const recomputed = summarize(e.cases.map((c) => ({
    error: c.error,
    setup: c.setup.map((a) => ({ ...a, ok: judge(a, ctx.conforms).ok })),
    assertions: c.assertions.map((a) => ({ ...a, ok: judge(a, ctx.conforms).ok })),
  })));
  for (const [k, v] of Object.entries(recomputed)) {
    if (e.summary[k] !== v) {
      errors.push(`summary.${k} is ${e.summary[k]}, the assertions give ${v}`);
    }
  }
  return errors;
}

/**
 * Lines the probes' redaction ({@link redactEvidence}) would change: a URL's credentials, a
 * secret-named field's value, a secret `KEY=value` left in the evidence. The line is shown
 * redacted, never as written.
 */
export function secretErrors(text: string): string[] {
  const out: string[] = [];
  text.split("\n").forEach((line, i) => {
    const redacted = redactEvidence(line);
    if (redacted === line) return;
    out.push(`a secret appears in the evidence at line ${i + 1}: ${redacted.trim().slice(0, 200)}`);
  });
  return out;
}

/** Git as the verifier asks it (the repository of this checkout). */
export async function gitView(
  commit: string,
): Promise<{ exists: boolean; time: string | null; ancestor: boolean }> {
  const run = async (args: string[]) => {
    const o = await new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" })
      .output();
    return { code: o.code, out: new TextDecoder().decode(o.stdout).trim() };
  };
  if (!/^[0-9a-f]{40}$/.test(commit)) return { exists: false, time: null, ancestor: false };
  const type = await run(["cat-file", "-t", commit]);
  if (type.code !== 0 || type.out !== "commit") {
    return { exists: false, time: null, ancestor: false };
  }
  const time = await run(["show", "-s", "--format=%cI", commit]);
  const anc = await run(["merge-base", "--is-ancestor", commit, "HEAD"]);
  return { exists: true, time: time.out || null, ancestor: anc.code === 0 };
}

/** Every error of one evidence file's text (schema, semantics, secrets). */
export async function fileErrors(
  text: string,
  schema: Schema,
  ctx: VerifyContext,
): Promise<{ errors: string[]; summary: string }> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { errors: [`unreadable: ${e instanceof Error ? e.message : e}`], summary: "" };
  }
  const schemaErrors = validate(schema, schema, doc);
  if (schemaErrors.length > 0) return { errors: schemaErrors, summary: "" };
  const e = doc as EvidenceFile;
  const errors = [...await semanticErrors(e, ctx), ...secretErrors(text)];
  const s = e.summary;
  return {
    errors,
    summary: ` ${s.passed}/${s.cases} cases, ${
      s.assertions - s.failed_assertions
    }/${s.assertions} assertions`,
  };
}

/** Verify files; prints per file; returns the number of files with errors. */
export async function verify(
  files: string[],
  options: { allowDirty?: boolean; allowPartial?: boolean } = {},
): Promise<number> {
  const schema = JSON.parse(await Deno.readTextFile(SCHEMA)) as Schema;
  const ctx: VerifyContext = {
    allowDirty: options.allowDirty ?? false,
    allowPartial: options.allowPartial ?? false,
    git: gitView,
    now: () => Date.now(),
    conforms: await loadRunEventValidator(),
  };
  let bad = 0;
  for (const f of files) {
    const name = f.slice(f.lastIndexOf("/") + 1);
    let result: { errors: string[]; summary: string };
    try {
      result = await fileErrors(await Deno.readTextFile(f), schema, ctx);
    } catch (e) {
      result = { errors: [`unreadable: ${e instanceof Error ? e.message : e}`], summary: "" };
    }
    if (result.errors.length === 0) {
      console.log(`[verify] ok ${name}:${result.summary}`);
      const commit = (JSON.parse(await Deno.readTextFile(f)) as EvidenceFile).provenance.commit;
      const changed = await staleSince(commit);
      if (changed.length > 0) {
        console.log(
          `[verify] warning: ${name} is stale since ${commit.slice(0, 12)}: ${changed.length} ` +
            `file(s) the probes exercise changed after it (${changed.slice(0, 5).join(", ")}${
              changed.length > 5 ? ", …" : ""
            })`,
        );
      }
    } else {
      bad++;
      console.log(`[verify] FAILED ${name}:${result.summary}`);
      for (const m of result.errors.slice(0, 60)) console.log(`[verify]   ${m}`);
      if (result.errors.length > 60) {
        console.log(`[verify]   ... ${result.errors.length - 60} more`);
      }
    }
  }
  return bad;
}

/** What the probes exercise: a change under these after an evidence file's commit makes it stale. */
export const EXERCISED = ["lib", "runner", "probes", "harness"] as const;

/**
 * The files under {@link EXERCISED} that differ between `commit` and the working tree, tests and
 * Markdown left out (empty: the evidence is of the code that is here). A stale file still verifies — it is what that commit
 * did — but `verify` says so, so that no figure is quoted as today's.
 */
export async function staleSince(commit: string): Promise<string[]> {
  const o = await new Deno.Command("git", {
    args: ["diff", "--name-only", commit, "--", ...EXERCISED],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (o.code !== 0) {
    throw new Error(`git diff ${commit}: ${new TextDecoder().decode(o.stderr).trim()}`);
  }
  // what the probes run, not the tests and notes kept beside it
  return new TextDecoder().decode(o.stdout).split("\n")
    .filter((x) => x !== "" && !/_test\.ts$/.test(x) && !x.endsWith(".md"));
}

/**
 * What the repository's own `verification/` must hold: the last full-tier run of every probe
 * (one file per probe, each recording no selection). Returns what is missing or narrower.
 */
export function committedSetErrors(docs: Map<string, EvidenceFile>): string[] {
  const out: string[] = [];
  for (const probe of Object.keys(PROBE_FILES) as ProbeName[]) {
    const d = docs.get(`${probe}.json`);
    if (!d) out.push(`${probe}.json is missing: verification/ holds every probe's full-tier run`);
    else if (Object.keys(d.provenance.selection).length > 0) {
      out.push(
        `${probe}.json records the selection ${
          JSON.stringify(d.provenance.selection)
        }: verification/ holds full-tier runs only`,
      );
    }
  }
  return out;
}

async function evidenceFiles(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(DIR)) {
    if (e.isFile && e.name.endsWith(".json") && e.name !== "schema.json") {
      out.push(`${DIR}/${e.name}`);
    }
  }
  return out.sort();
}

if (import.meta.main) {
  const flags = new Set(Deno.args.filter((a) => a.startsWith("--")));
  for (const f of flags) {
    if (f !== "--allow-dirty" && f !== "--allow-partial") {
      console.log(`[verify] unknown option ${f} (--allow-dirty, --allow-partial)`);
      Deno.exit(2);
    }
  }
  const named = Deno.args.filter((a) => !a.startsWith("--"));
  const files = named.length > 0 ? named : await evidenceFiles();
  if (files.length === 0) {
    console.log(`[verify] no evidence files in ${DIR} (run 'deno task probes')`);
    Deno.exit(1);
  }
  let bad = await verify(files, {
    allowDirty: flags.has("--allow-dirty"),
    allowPartial: flags.has("--allow-partial"),
  });
  if (named.length === 0 && DIR === `${ROOT}verification`) {
    const docs = new Map<string, EvidenceFile>();
    for (const f of files) {
      try {
        docs.set(f.slice(f.lastIndexOf("/") + 1), JSON.parse(await Deno.readTextFile(f)));
      } catch {
        // unreadable: reported by verify above
      }
    }
    const missing = committedSetErrors(docs);
    for (const m of missing) console.log(`[verify] FAILED ${m}`);
    if (missing.length > 0) bad++;
  }
  console.log(`[verify] ${files.length - bad} of ${files.length} evidence files verified`);
  Deno.exit(bad === 0 ? 0 : 1);
}
