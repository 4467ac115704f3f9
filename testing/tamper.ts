/**
 * Tamperings of evidence files, for the mutation tests of `deno task verify`
 * (tools/verify_test.ts on built evidence, testing/evidence_checks.ts on the evidence of the
 * suite's own probe run). Each one edits a parsed copy the way someone hiding a failure might — keeping the file
 * valid against the schema and, where that helps the forgery, the summary consistent — and says
 * which case and which assertion the verifier's message must name.
 *
 * The first six are the ones issue 13 lists under "Why"; the others are further ways to make
 * evidence prove nothing.
 *
 * @example
 * ```ts
 * import { TAMPERINGS } from "./tamper.ts";
 * console.log(TAMPERINGS.map((t) => t.name).join(", "));
 * ```
 * @module
 */
import type { EvidenceFile } from "../tools/verify.ts";
import { type Assertion, type CaseEvidence, judge, summarize } from "../probes/evidence.ts";
import { faultPoints, PROBE_FILES } from "../probes/catalogue.ts";

/** What a tampering hit: the verifier's message must name this case and check (when given). */
export interface Target {
  caseId: string | null;
  check: string | null;
}

/** One tampering. */
export interface Tampering {
  name: string;
  /** `issue`: listed in issue 13; `extra`: another way to hollow evidence out. */
  source: "issue" | "extra";
  /** Edit `doc` in place; null when this evidence has nothing to tamper with this way. */
  apply(doc: EvidenceFile): Target | null;
}

/** Recompute the summary so that a forgery is not caught by the summary alone. */
function resummarize(doc: EvidenceFile): void {
  doc.summary = summarize(doc.cases) as unknown as Record<string, number>;
}

function firstWith(
  doc: EvidenceFile,
  test: (a: Assertion, c: CaseEvidence) => boolean,
): { c: CaseEvidence; a: Assertion } | null {
  for (const c of doc.cases) {
    for (const a of c.assertions) if (test(a, c)) return { c, a };
  }
  return null;
}

/** The tamperings, in order: the six first. */
export const TAMPERINGS: readonly Tampering[] = [
  {
    name: "an assertion whose actual contradicts its expected still says ok: true",
    source: "issue",
    apply(doc) {
      const hit = firstWith(doc, (a) => a.ok && (a.kind === "equal" || a.kind === "set-equal"));
      if (!hit) return null;
      hit.a.actual = { tampered: hit.a.actual };
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "a case deleted",
    source: "issue",
    apply(doc) {
      const gone = doc.cases.pop();
      if (!gone) return null;
      resummarize(doc);
      return { caseId: gone.id, check: null };
    },
  },
  {
    name: "a case's assertions replaced by one trivial assertion",
    source: "issue",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      c.assertions = [{
        check: "trivial.truth",
        name: "true is true",
        kind: "equal",
        witness: "process",
        expected: true,
        actual: true,
        ok: true,
      }];
      resummarize(doc);
      return { caseId: c.id, check: null };
    },
  },
  {
    name: "the SIGKILL assertions removed from every case",
    source: "issue",
    apply(doc) {
      let first: Target | null = null;
      for (const c of doc.cases) {
        const kills = c.assertions.filter((a) => a.kind === "killed-by-signal");
        if (kills.length === 0) continue;
        first ??= { caseId: c.id, check: kills[0].check };
        c.assertions = c.assertions.filter((a) => a.kind !== "killed-by-signal");
      }
      if (first) resummarize(doc);
      return first;
    },
  },
  {
    name: "a case relabelled as another boundary",
    source: "issue",
    apply(doc) {
      const c = doc.cases.find((x) => x.kind === "matrix");
      if (!c) return null;
      const point = `${c.boundary}:${c.side}`;
      const other = faultPoints().find((p) => p !== point)!;
      const i = other.lastIndexOf(":");
      c.boundary = other.slice(0, i);
      c.side = other.slice(i + 1) as "before" | "after";
      c.id = `${other}:${c.backend}`;
      const only = doc.provenance.selection.only;
      if (only) {
        doc.provenance.selection.only = only.split(",").map((p) => p === point ? other : p).join(
          ",",
        );
      }
      return { caseId: c.id, check: "fault.killed_at_site" };
    },
  },
  {
    name: "generated_at set to 1999",
    source: "issue",
    apply(doc) {
      doc.generated_at = "1999-01-01T00:00:00.000Z";
      return { caseId: null, check: null };
    },
  },
  {
    name: "the whole run back-dated to 1999 (generated_at and provenance)",
    source: "extra",
    apply(doc) {
      doc.generated_at = "1999-01-01T00:00:00.000Z";
      doc.provenance.started_at = doc.generated_at;
      return { caseId: null, check: null };
    },
  },
  {
    name: "the summary forged",
    source: "extra",
    apply(doc) {
      doc.summary.passed += 1;
      return { caseId: null, check: null };
    },
  },
  {
    name: "a case taken from another run",
    source: "extra",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      c.run_id = crypto.randomUUID();
      return { caseId: c.id, check: null };
    },
  },
  {
    name: "a case recorded twice",
    source: "extra",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      doc.cases.push(structuredClone(c));
      resummarize(doc);
      return { caseId: c.id, check: null };
    },
  },
  {
    name: "evidence of a dirty tree passed off as clean evidence",
    source: "extra",
    apply(doc) {
      if (doc.provenance.dirty) return null;
      doc.provenance.dirty = true;
      doc.provenance.allow_dirty = true;
      doc.provenance.dirty_paths = ["lib/runtime/driver.ts"];
      return { caseId: null, check: null };
    },
  },
  {
    name: "a commit this repository does not have",
    source: "extra",
    apply(doc) {
      doc.provenance.commit = "0123456789abcdef0123456789abcdef01234567";
      return { caseId: null, check: null };
    },
  },
  {
    name: "an unfinished run",
    source: "extra",
    apply(doc) {
      doc.provenance.ended_at = null;
      return { caseId: null, check: null };
    },
  },
  {
    name: "the samples taken while stopped emptied (a vacuous comparison)",
    source: "extra",
    apply(doc) {
      const hit = firstWith(doc, (a) => a.check === "offsets.stopped_equal_close");
      if (!hit) return null;
      hit.a.actual = [];
      for (const s of hit.c.samples) s.old_running = true;
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "setup checks counted as evidence",
    source: "extra",
    apply(doc) {
      const c = doc.cases.find((x) => x.setup.length > 0);
      if (!c) return null;
      const check = c.setup[0].check;
      c.assertions.push(...c.setup);
      c.setup = [];
      resummarize(doc);
      return { caseId: c.id, check };
    },
  },
  {
    name: "a required check given a more lenient kind",
    source: "extra",
    apply(doc) {
      const hit = firstWith(doc, (a) => a.check === "output.exact" || a.check === "rejection.code");
      if (!hit) return null;
      hit.a.kind = hit.a.kind === "set-equal" ? "subset" : "count";
      if (hit.a.kind === "count") hit.a.expected = { min: 0 };
      hit.a.ok = judge(hit.a).ok;
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "a pinned expectation moved to match a wrong result",
    source: "extra",
    apply(doc) {
      const hit = firstWith(
        doc,
        (a) => a.check === "rejection.code" || a.check === "fault.killed_at_site",
      );
      if (!hit) return null;
      if (hit.a.check === "rejection.code") {
        hit.a.expected = ["BLOCKED_SOMETHING_ELSE"];
        hit.a.actual = ["BLOCKED_SOMETHING_ELSE"];
      } else {
        const x = hit.a.actual as { fired?: string };
        hit.a.expected = { signal: "SIGKILL", site: "journal.elsewhere:after" };
        x.fired = "journal.elsewhere:after";
      }
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "a harness timeout recorded as a fired fault",
    source: "extra",
    apply(doc) {
      const hit = firstWith(doc, (a) => a.kind === "killed-by-signal");
      if (!hit) return null;
      (hit.a.actual as { timed_out: boolean }).timed_out = true;
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "the history rewritten so the armed worker no longer matches",
    source: "extra",
    apply(doc) {
      const hit = firstWith(
        doc,
        (a) => a.check === "fault.killed_at_site" || a.check === "rejection.stopped_at_site",
      );
      if (!hit) return null;
      const proc = (hit.a.actual as { process?: string }).process;
      const inv = hit.c.history.find((h) => h.process === proc && h.type === "invoke");
      if (!inv) return null;
      inv.value = { ...(inv.value as Record<string, unknown>), fault: "journal.elsewhere:after" };
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "an OpenLineage event edited after validation",
    source: "extra",
    apply(doc) {
      const hit = firstWith(doc, (a) => a.kind === "conformant");
      if (!hit) return null;
      const events = (hit.a.actual as { events: Array<Record<string, unknown>> }).events;
      events[0].eventTime = "yesterday";
      return { caseId: hit.c.id, check: hit.a.check };
    },
  },
  {
    name: "a DSN with credentials left in the evidence",
    source: "extra",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      c.history[0].value = { dsn: "postgres://sluice:hunter2@db.internal:5432/state" };
      return { caseId: null, check: null };
    },
  },
  {
    name: "a secret-named value and a secret KEY=value left in the evidence",
    source: "extra",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      c.history[0].value = { api_token: "tok_0123", argv: ["DB_PASSWORD=hunter2"] };
      return { caseId: null, check: null };
    },
  },
  {
    name: "a case moved to another probe's file",
    source: "extra",
    apply(doc) {
      const c = doc.cases[0];
      if (!c) return null;
      const other = Object.values(PROBE_FILES).find((k) => k !== c.kind)!;
      c.kind = other;
      return { caseId: c.id, check: null };
    },
  },
];
