/**
 * The typed evidence model shared by the probes and `deno task verify`.
 *
 * Every assertion carries a **kind** (how its verdict follows from its values), a stable
 * **check** ID (what it proves, e.g. `fault.killed_at_site`), the **witness** that read its actual
 * value (the OS process table, Kafka's own tools, the Docker Engine API, the state files or rows
 * read directly, or sluice's own view), and its expected and actual values. {@link judge} is the
 * one rule that turns kind + expected + actual into a verdict: the probes record it, the verifier
 * recomputes it and rejects any recorded `ok` it cannot reproduce. Kinds over collections need a
 * sample: an empty collection where one is required is a failure, never a vacuous pass.
 *
 * Setup checks (the fixture came up) are recorded apart, in `setup`, and never counted as
 * evidence.
 *
 * @example
 * ```ts
 * import { Recorder } from "./evidence.ts";
 * const r = new Recorder();
 * r.record({ check: "generation.serial", name: "serial 1 → 2", kind: "equal",
 *   witness: "state-files", expected: { before: 1, after: 2 }, actual: { before: 1, after: 2 } });
 * console.log(r.assertions[0].ok); // true
 * ```
 * @module
 */
import type { HistoryEntry } from "../harness/faults.ts";
import { redactText } from "../lib/artifact/redact.ts";

export type { HistoryEntry };

/** How a verdict follows from expected and actual. */
export type AssertionKind =
  /** `actual` deep-equals `expected`. */
  | "equal"
  /** Both arrays hold the same items (as multisets); at least one item is required. */
  | "set-equal"
  /** `actual` is a non-empty array whose every item equals `expected.value` (not null or empty). */
  | "all-equal"
  /**
   * `actual` is a list of at least two offset vectors (partition → decimal offset), each
   * non-empty, over the same partitions, never decreasing from one to the next.
   */
  | "monotonic"
  /** `actual.exit` equals `expected.exit` and the process was not ended by a signal. */
  | "exit-status"
  /**
   * The process ended by `expected.signal`, not by a harness timeout; for a fault site, the
   * process printed the fault marker of `expected.site`; for a harness kill, `actual.killed_by`
   * equals `expected.killed_by`.
   */
  | "killed-by-signal"
  /** Every item of `expected` (a non-empty array) is in `actual` (an array). */
  | "present"
  /** No item of `expected` (a non-empty array) is in `actual`, the observed collection. */
  | "absent"
  /** `actual` is a non-empty array whose every item is in `expected` (the allowed items). */
  | "subset"
  /** `actual` is an array whose length is within `expected.min` / `expected.max`. */
  | "count"
  /**
   * An independent witness (`expected`) and sluice's own view (`actual`), both
   * `{ witness, value }`, by different witnesses, report the same non-empty value.
   */
  | "agree"
  /** A snapshot taken before (`expected`) equals the one taken after (`actual`); non-empty. */
  | "unchanged"
  /**
   * `actual.events` is a non-empty list of OpenLineage RunEvents, each valid against the
   * official schemas (the verdict needs the validator: see {@link judge}'s `conforms`).
   */
  | "conformant";

/** Every kind, for schema and verifier checks. */
export const ASSERTION_KINDS: readonly AssertionKind[] = [
  "equal",
  "set-equal",
  "all-equal",
  "monotonic",
  "exit-status",
  "killed-by-signal",
  "present",
  "absent",
  "subset",
  "count",
  "agree",
  "unchanged",
  "conformant",
];

/** Who read an actual value. */
export type Witness =
  /** the exit status or signal of an OS process, as the harness saw it end */
  | "process"
  /** Kafka's own Java admin tools, run inside the broker container */
  | "kafka-tools"
  /** the harness's own Kafka admin client (harness/kafka.ts), not sluice's Kafka provider */
  | "kafka-admin"
  /** the Docker Engine HTTP API, called directly (not through sluice's providers) */
  | "docker-api"
  /** a file read on the host filesystem (e.g. a volume's instance file under its mountpoint) */
  | "host-fs"
  /** the state files parsed by the probe (not through lib/state or `state show`) */
  | "state-files"
  /** the state rows read with SQL by the probe (not through lib/state or `state show`) */
  | "state-rows"
  /** records read back from a topic by the harness's own consumer */
  | "topic-read"
  /** an OpenLineage file written by sluice, validated by the probe */
  | "lineage-file"
  /** Kafka Connect's REST API, called directly (not through sluice's Connect client) */
  | "connect-rest"
  /** sluice's own view (CLI output, SDK observation) */
  | "sluice"
  /** several of the above, joined by `+` (e.g. a before/after snapshot) */
  | `${string}+${string}`
  /** `<independent> vs sluice` for an agreement */
  | `${string} vs ${string}`;

/** One assertion. */
export interface Assertion {
  /** Stable ID of what it proves; required checks are named by it. */
  check: string;
  /** What it proves, in words. */
  name: string;
  kind: AssertionKind;
  witness: Witness;
  expected: unknown;
  actual: unknown;
  /** {@link judge}'s verdict at recording time; the verifier recomputes it. */
  ok: boolean;
}

/** A verdict and, when false, why. */
export interface Verdict {
  ok: boolean;
  why: string | null;
}

/**
 * Evidence text redacted: the rules of every CLI output (`redactText`) but the one for a
 * scheme-less `user:pass@host`, since evidence names fault sites as `site:side@N` (which that
 * rule would hide) and every address the harness records has a scheme. The probes write what
 * this returns; the verifier refuses a file it would change.
 */
export function redactEvidence(text: string): string {
  return redactText(text, { bareUserinfo: false });
}

/** JSON text with sorted keys: equal values give equal text. */
export function stableJson(v: unknown): string {
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(
      Object.keys(v as Record<string, unknown>).sort().map((k) => [
        k,
        sortKeys((v as Record<string, unknown>)[k]),
      ]),
    );
  }
  return v;
}

/** JSON-safe copy (bigint → decimal string, Map → object, undefined dropped). */
export function toJson(v: unknown): unknown {
  if (v === undefined) return null;
  return JSON.parse(
    JSON.stringify(
      v,
      (_k, x) =>
        typeof x === "bigint" ? x.toString() : x instanceof Map ? Object.fromEntries(x) : x,
    ),
  );
}

function same(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b);
}

/** null, undefined, "", [] and {} are empty: a check over them proves nothing. */
export function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.keys(v as object).length === 0;
  return false;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

const fail = (why: string): Verdict => ({ ok: false, why });
const pass: Verdict = { ok: true, why: null };

function multiset(list: unknown[]): string[] {
  return list.map(stableJson).sort();
}

function nonDecreasing(a: Record<string, unknown>, b: Record<string, unknown>): string | null {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (!same(ka, kb)) return `partitions ${ka.join(",")} then ${kb.join(",")}`;
  for (const k of ka) {
    const x = a[k];
    const y = b[k];
    if (
      typeof x !== "string" || typeof y !== "string" || !/^-?\d+$/.test(x) || !/^-?\d+$/.test(y)
    ) {
      return `partition ${k}: ${JSON.stringify(x)} → ${JSON.stringify(y)} are not decimal offsets`;
    }
    if (BigInt(y) < BigInt(x)) return `partition ${k} moved backwards ${x} → ${y}`;
  }
  return null;
}

/** The one rule that turns an assertion's kind and values into a verdict. */
export function judge(
  a: Pick<Assertion, "kind" | "expected" | "actual">,
  conforms?: (event: unknown) => { valid: boolean; errors: string[] },
): Verdict {
  const { expected: e, actual: x } = a;
  switch (a.kind) {
    case "equal":
      return same(e, x) ? pass : fail("actual differs from expected");
    case "set-equal": {
      if (!Array.isArray(e) || !Array.isArray(x)) return fail("set-equal needs two arrays");
      if (e.length === 0 && x.length === 0) return fail("both sets are empty: nothing compared");
      return same(multiset(e), multiset(x)) ? pass : fail("the sets differ");
    }
    case "all-equal": {
      if (!isRecord(e) || !("value" in e)) return fail("all-equal needs expected.value");
      if (isEmpty(e.value)) return fail("the expected value is empty");
      if (!Array.isArray(x) || x.length === 0) return fail("no sample: the list is empty");
      const bad = x.findIndex((v) => !same(v, e.value));
      return bad < 0 ? pass : fail(`item ${bad} differs from the expected value`);
    }
    case "monotonic": {
      if (!Array.isArray(x) || x.length < 2) return fail("fewer than two vectors to compare");
      for (let i = 0; i < x.length; i++) {
        if (!isRecord(x[i]) || isEmpty(x[i])) return fail(`vector ${i} is empty`);
      }
      for (let i = 1; i < x.length; i++) {
        const why = nonDecreasing(
          x[i - 1] as Record<string, unknown>,
          x[i] as Record<string, unknown>,
        );
        if (why) return fail(`vector ${i - 1} → ${i}: ${why}`);
      }
      return pass;
    }
    case "exit-status": {
      if (!isRecord(e) || typeof e.exit !== "number") return fail("expected.exit is not a number");
      if (!isRecord(x)) return fail("actual is not a process outcome");
      if (x.signal !== null && x.signal !== undefined) {
        return fail(`the process was ended by ${x.signal}`);
      }
      if (x.timed_out === true) return fail("the harness timed the process out");
      if (x.exit === e.exit) return pass;
      // the blockers a refusal gave: a failed run's printed line is often all there is to read
      const codes = Array.isArray(x.blockers)
        ? x.blockers.map((b) => isRecord(b) ? `${b.code}: ${b.message}` : String(b))
        : [];
      return fail(
        `exit ${x.exit}, expected ${e.exit}${codes.length ? ` (${codes.join("; ")})` : ""}`,
      );
    }
    case "killed-by-signal": {
      if (!isRecord(e) || typeof e.signal !== "string") return fail("expected.signal is missing");
      if (!isRecord(x)) return fail("actual is not a process outcome");
      if (x.timed_out === true) return fail("killed by the harness's timeout, not by the fault");
      if (x.signal !== e.signal) return fail(`ended by ${x.signal ?? `exit ${x.exit}`}`);
      if (typeof e.site === "string") {
        if (typeof x.fired !== "string") return fail("no fault marker was printed");
        if (x.fired !== e.site && !x.fired.startsWith(`${e.site}@`)) {
          return fail(`the marker names ${x.fired}, not ${e.site}`);
        }
        return pass;
      }
      if (typeof e.killed_by === "string") {
        return x.killed_by === e.killed_by ? pass : fail(`killed by ${x.killed_by}`);
      }
      return fail("expected names neither a site nor a killer");
    }
    case "present": {
      if (!Array.isArray(e) || e.length === 0) return fail("nothing expected to be present");
      if (!Array.isArray(x)) return fail("actual is not a collection");
      const have = new Set(x.map(stableJson));
      const missing = e.filter((v) => !have.has(stableJson(v)));
      return missing.length === 0 ? pass : fail(`missing ${stableJson(missing)}`);
    }
    case "absent": {
      if (!Array.isArray(e) || e.length === 0) return fail("nothing named to be absent");
      if (!Array.isArray(x)) return fail("actual is not a collection");
      const have = new Set(x.map(stableJson));
      const found = e.filter((v) => have.has(stableJson(v)));
      return found.length === 0 ? pass : fail(`present: ${stableJson(found)}`);
    }
    case "subset": {
      if (!Array.isArray(e)) return fail("expected (the allowed items) is not an array");
      if (!Array.isArray(x) || x.length === 0) return fail("no sample: the list is empty");
      const allowed = new Set(e.map(stableJson));
      const extra = x.filter((v) => !allowed.has(stableJson(v)));
      return extra.length === 0 ? pass : fail(`not allowed: ${stableJson(extra)}`);
    }
    case "count": {
      if (!isRecord(e) || (typeof e.min !== "number" && typeof e.max !== "number")) {
        return fail("expected has neither min nor max");
      }
      if (!Array.isArray(x)) return fail("actual is not a collection");
      if (typeof e.min === "number" && x.length < e.min) return fail(`${x.length} < ${e.min}`);
      if (typeof e.max === "number" && x.length > e.max) return fail(`${x.length} > ${e.max}`);
      return pass;
    }
    case "agree": {
      if (!isRecord(e) || !isRecord(x)) return fail("agree needs {witness, value} on both sides");
      if (typeof e.witness !== "string" || typeof x.witness !== "string") {
        return fail("a side does not name its witness");
      }
      if (e.witness === x.witness) return fail("both sides come from the same witness");
      if (isEmpty(e.value)) return fail("the independent witness saw nothing");
      return same(e.value, x.value) ? pass : fail(`${e.witness} and ${x.witness} disagree`);
    }
    case "unchanged": {
      if (isEmpty(e)) return fail("the snapshot before is empty");
      return same(e, x) ? pass : fail("the snapshot changed");
    }
    case "conformant": {
      if (!conforms) return fail("no OpenLineage validator to judge with");
      const events = isRecord(x) && Array.isArray(x.events) ? x.events : null;
      if (!events || events.length === 0) return fail("no event to validate");
      for (let i = 0; i < events.length; i++) {
        const r = conforms(events[i]);
        if (!r.valid) return fail(`event ${i}: ${r.errors.join("; ")}`);
      }
      return pass;
    }
  }
  return fail(`unknown kind ${JSON.stringify((a as { kind: unknown }).kind)}`);
}

/** What a probe passes to {@link Recorder.record}. */
export type AssertionInput = Omit<Assertion, "ok">;

/** Collects a case's assertions (and its setup checks, apart); a failed one does not stop it. */
export class Recorder {
  readonly assertions: Assertion[] = [];
  readonly setup: Assertion[] = [];
  #conforms?: (event: unknown) => { valid: boolean; errors: string[] };

  constructor(conforms?: (event: unknown) => { valid: boolean; errors: string[] }) {
    this.#conforms = conforms;
  }

  #make(input: AssertionInput): Assertion {
    const a = {
      ...input,
      expected: toJson(input.expected),
      actual: toJson(input.actual),
    };
    return { ...a, ok: judge(a, this.#conforms).ok };
  }

  /** Record an assertion of the evidence; returns its verdict. */
  record(input: AssertionInput): boolean {
    const a = this.#make(input);
    this.assertions.push(a);
    return a.ok;
  }

  /** Record a setup check (not evidence, not counted); returns its verdict. */
  recordSetup(input: AssertionInput): boolean {
    const a = this.#make(input);
    this.setup.push(a);
    return a.ok;
  }
}

/** A sample taken after a worker died, while no worker ran. */
export interface Sample {
  /** The worker process whose death it follows. */
  after: string;
  /** The last checkpoint of the pending operation, read from the state directly. */
  stage: string | null;
  /** The old runner container is running (Docker API). */
  old_running: boolean;
  /** A container other than the old runner is running (Docker API). */
  candidate_running: boolean;
  /** Committed offsets of the application's group on the input topic (Kafka's tools). */
  offsets: Record<string, string>;
  time: string;
}

/** Whether a sample was taken while the runner was stopped (recomputed, never read). */
export function stoppedSample(s: Sample): boolean {
  return !s.old_running && !s.candidate_running;
}

/** The kinds of cases and the probes that hold them. */
export type CaseKind = "matrix" | "rejection" | "disruption" | "random-kill";

/** One case of a probe. */
export interface CaseEvidence {
  id: string;
  kind: CaseKind;
  /** The probe run it belongs to (equal to the file's `provenance.run_id`). */
  run_id: string;
  boundary: string | null;
  side: "before" | "after" | null;
  backend: "local" | "postgres";
  /** Case parameters that verify checks against the code (codes, seeds, delays, ...). */
  params: Record<string, unknown>;
  started_at: string;
  duration_ms: number;
  /** How the operation ended: completed, precisely blocked, or neither. */
  outcome: "completed" | "blocked" | "failed" | null;
  history: HistoryEntry[];
  samples: Sample[];
  setup: Assertion[];
  assertions: Assertion[];
  ok: boolean;
  error: string | null;
}

/** A probe's summary, computed from its cases. */
export interface Summary {
  cases: number;
  passed: number;
  failed: number;
  assertions: number;
  failed_assertions: number;
}

/** A case's verdict: no error, every setup check and every assertion (at least one) passed. */
export function caseVerdict(c: Pick<CaseEvidence, "error" | "setup" | "assertions">): boolean {
  return c.error === null && c.assertions.length > 0 && c.setup.every((a) => a.ok) &&
    c.assertions.every((a) => a.ok);
}

/** The summary from the cases (setup checks are not counted). */
export function summarize(
  cases: Array<Pick<CaseEvidence, "error" | "setup" | "assertions">>,
): Summary {
  const all = cases.flatMap((c) => c.assertions);
  const passed = cases.filter(caseVerdict).length;
  return {
    cases: cases.length,
    passed,
    failed: cases.length - passed,
    assertions: all.length,
    failed_assertions: all.filter((a) => !a.ok).length,
  };
}
