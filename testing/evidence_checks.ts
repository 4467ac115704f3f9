/**
 * What the test suite checks on the evidence its own probes run just wrote, beyond the
 * verifier's acceptance (`tools/verify.ts`, run on the same files by `tools/test.ts`):
 *
 * - **tamperings**: every tampering of `testing/tamper.ts` applied to a copy of each real
 *   evidence file is rejected by the verifier, with a message naming the case and the assertion
 *   it hid; and every tampering found something to tamper with in some file (the dirty-tree one
 *   only when the run came from a clean tree);
 * - **a planted secret**: the probes reached PostgreSQL through a DSN carrying a password
 *   ({@link plantPassword}; the server trusts, so the password only travels) and no evidence file
 *   holds it, while a fault-matrix case that ran on PostgreSQL passed (so the DSN was used).
 *
 * Run on the suite tier's evidence (every probe kind, both backends), not on a second, smaller
 * probe run: the evidence the suite already paid for is the most real there is.
 *
 * @example
 * ```ts
 * import { evidenceCheckFailures, plantPassword } from "./evidence_checks.ts";
 * const planted = plantPassword("postgres://postgres@127.0.0.1:5432/postgres");
 * console.log(planted.url.includes(planted.password)); // true
 * // (await evidenceCheckFailures(dir, planted.password, { dirty: false })).failures → []
 * ```
 * @module
 */
import { fileErrors, gitView, type VerifyContext } from "../tools/verify.ts";
import type { EvidenceFile } from "../tools/verify.ts";
import { loadRunEventValidator } from "../lib/lineage/validate.ts";
import { TAMPERINGS } from "./tamper.ts";

const ROOT = new URL("..", import.meta.url).pathname;
/** The one tampering that finds nothing in evidence of a dirty tree. */
const DIRTY_TREE = "evidence of a dirty tree passed off as clean evidence";

/** A DSN with a fresh password planted in it, and the password to search for. */
export function plantPassword(pgUrl: string): { url: string; password: string } {
  const password = `dsn${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const url = new URL(pgUrl);
  if (url.username === "") url.username = "postgres";
  url.password = password;
  return { url: url.toString(), password };
}

/** The outcome of the checks: how many were made, and each failure named. */
export interface EvidenceChecks {
  checked: number;
  failures: string[];
}

/**
 * Run the checks on the evidence files (`*.json`) in `dir`: each (file, tampering) pair that
 * applies is one check, the planted password and the tamperings' coverage one each.
 */
export async function evidenceCheckFailures(
  dir: string,
  password: string,
  options: { dirty: boolean },
): Promise<EvidenceChecks> {
  const schema = JSON.parse(
    await Deno.readTextFile(`${ROOT}verification/schema.json`),
  ) as Parameters<typeof fileErrors>[1];
  const ctx: VerifyContext = {
    allowDirty: options.dirty,
    allowPartial: true,
    git: gitView,
    now: () => Date.now(),
    conforms: await loadRunEventValidator(),
  };
  const files: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".json")) {
      files[e.name] = await Deno.readTextFile(`${dir}/${e.name}`);
    }
  }
  const out: EvidenceChecks = { checked: 0, failures: [] };
  /** One check, by its ID (the name a failure carries). */
  const check = (id: string, ok: boolean, failure: () => string) => {
    out.checked++;
    if (!ok) out.failures.push(`${id}: ${failure()}`);
  };

  // the planted password: a PostgreSQL case ran and passed, and no file holds the password
  const matrix = files["fault-matrix.json"];
  const pgPassed = matrix !== undefined &&
    (JSON.parse(matrix) as EvidenceFile).cases.some((c) => c.backend === "postgres" && c.ok);
  const holding = Object.entries(files).filter(([, text]) => text.includes(password));
  check(
    "evidence.planted_password_absent",
    pgPassed && holding.length === 0,
    () =>
      pgPassed
        ? `the planted DSN password appears in ${holding.map(([n]) => n).join(", ")}`
        : "no fault-matrix case passed on PostgreSQL: the planted DSN was never used",
  );

  const applied = new Set<string>();
  for (const [name, text] of Object.entries(files)) {
    for (const t of TAMPERINGS) {
      const doc = JSON.parse(text) as EvidenceFile;
      const target = t.apply(doc);
      if (target === null) continue;
      applied.add(t.name);
      const { errors } = await fileErrors(JSON.stringify(doc), schema, ctx);
      const where = `${name}: ${t.name}`;
      const named = target.caseId ? errors.filter((e) => e.includes(target.caseId!)) : errors;
      const checked = target.check ? named.filter((e) => e.includes(target.check!)) : named;
      check(
        "evidence.tampering_rejected",
        errors.length > 0 && checked.length > 0,
        () =>
          errors.length === 0
            ? `${where}: accepted`
            : `${where}: no message names ${named.length === 0 ? target.caseId : target.check}:\n${
              errors.join("\n")
            }`,
      );
    }
  }
  const missing = TAMPERINGS.filter((t) => !applied.has(t.name)).map((t) => t.name);
  const expected = options.dirty ? [DIRTY_TREE] : [];
  check(
    "evidence.tamperings_applied",
    JSON.stringify(missing) === JSON.stringify(expected),
    () => `tamperings that found nothing to tamper with: ${missing.join("; ")}`,
  );
  return out;
}
