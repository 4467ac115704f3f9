// Needs nothing running: the verifier on complete evidence files built from the code's case
// lists (every probe, every case kind), then every tampering of testing/tamper.ts, each of which
// must be rejected with a message naming the case and the assertion.
import assert from "node:assert/strict";
import {
  committedSetErrors,
  type EvidenceFile,
  EXERCISED,
  fileErrors,
  staleSince,
  validate,
  type VerifyContext,
} from "./verify.ts";
import {
  type Assertion,
  type AssertionInput,
  type CaseEvidence,
  judge,
  summarize,
} from "../probes/evidence.ts";
import {
  connectorChange,
  connectorSerialBefore,
  dayTwoCommand,
  DESTROY_CONNECTORS_SERIAL_BEFORE,
  DESTROY_SERIAL_BEFORE,
  destroyVariant,
  DISRUPTIONS,
  expectedCaseIds,
  inventory,
  matrixJourney,
  operatorDecision,
  PRE_OPERATOR_FAULT,
  PROBE_FILES,
  type ProbeName,
  randomKillCases,
  randomKillDelay,
  rejectionExit,
  REJECTIONS,
  REMOVAL_SERIAL_BEFORE,
  stopsRunner,
} from "../probes/catalogue.ts";
import { loadRunEventValidator } from "../lib/lineage/validate.ts";
import { buildRunEvent } from "../lib/lineage/events.ts";
import { TAMPERINGS } from "../testing/tamper.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const schema = JSON.parse(await Deno.readTextFile(`${ROOT}verification/schema.json`));
const conforms = await loadRunEventValidator();
const COMMIT = "c0ffee0000000000000000000000000000000001";
const COMMIT_TIME = "2026-01-01T00:00:00.000Z";
const NOT_ANCESTOR = "c0ffee0000000000000000000000000000000002";
const T0 = Date.parse("2026-01-02T00:00:00.000Z");
const RUN = "8d6b4e8e-8f5c-4f35-9d54-6b1b1c2d3e4f";
const OLD_GENERATION = "0b6f0c39-8f55-4c1e-9d1b-5a0f2d0c9e11/0";
const NEW_GENERATION = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/0";

function context(over: Partial<VerifyContext> = {}): VerifyContext {
  return {
    allowDirty: false,
    allowPartial: false,
    git: (commit) =>
      Promise.resolve(
        commit === COMMIT || commit === NOT_ANCESTOR
          ? { exists: true, time: COMMIT_TIME, ancestor: commit === COMMIT }
          : { exists: false, time: null, ancestor: false },
      ),
    now: () => T0 + 3_600_000,
    conforms,
    ...over,
  };
}

const at = (ms: number) => new Date(T0 + ms).toISOString();

function a(input: AssertionInput): Assertion {
  return { ...input, ok: judge(input, conforms).ok };
}

const OP = "0b6f2f8e-4c1d-4d1a-9a43-6f0f3c2d9e11";
const CLOSE = { "0": "3", "1": "2", "2": "1" };
const BEFORE = { "0": "2", "1": "2", "2": "1" };
const AFTER = { "0": "7", "1": "6", "2": "5" };

function completion(serialBefore: number, fresh: boolean): Assertion[] {
  return [
    a({
      check: "recovery.completed",
      name: "completed in a fresh process",
      kind: "exit-status",
      witness: "process",
      expected: { exit: 0 },
      actual: {
        process: "worker-2",
        exit: 0,
        signal: null,
        timed_out: false,
        pid: 202,
        killed_pids: fresh ? [101] : [],
      },
    }),
    a({
      check: "offsets.monotonic",
      name: "offsets never backwards",
      kind: "monotonic",
      witness: "kafka-tools",
      expected: {},
      actual: [BEFORE, CLOSE, AFTER],
    }),
    a({
      check: "offsets.stopped_equal_close",
      name: "stopped = close",
      kind: "all-equal",
      witness: "kafka-tools+state-files",
      expected: { value: CLOSE },
      actual: [CLOSE],
    }),
    a({
      check: "output.exact",
      name: "exact output",
      kind: "set-equal",
      witness: "topic-read",
      expected: [{ key: "a-1" }, { key: "b-1" }],
      actual: [{ key: "b-1" }, { key: "a-1" }],
    }),
    a({
      check: "generation.single_candidate",
      name: "one candidate",
      kind: "equal",
      witness: "docker-api",
      expected: [{ state: "running", operation: OP, generation: `${OP}/0` }],
      actual: [{ state: "running", operation: OP, generation: `${OP}/0` }],
    }),
    a({
      check: "generation.serial",
      name: "serial +1",
      kind: "equal",
      witness: "state-files",
      expected: { before: serialBefore, after: serialBefore + 1 },
      actual: { before: serialBefore, after: serialBefore + 1 },
    }),
    a({
      check: "plan.noop",
      name: "no-op plan",
      kind: "equal",
      witness: "sluice",
      expected: { exit: 0, noop: true },
      actual: { exit: 0, noop: true },
    }),
    a({
      check: "lineage.conformant",
      name: "OpenLineage",
      kind: "conformant",
      witness: "lineage-file",
      expected: {},
      actual: {
        events: [buildRunEvent("START", {
          operationId: OP,
          project: "p",
          environment: null,
          applicationId: "app",
          bootstrap: "kafka:9092",
          inputTopic: "in",
          outputTopic: "out",
        }, { eventTime: new Date(T0) })],
      },
    }),
  ];
}

const TOPIC_IDS = { in: "KrT0gM2TSqqVH3a70ObztQ", out: "QSXC9u0JSaWsbT8oxfeA9A" };

/** The checks of a completed create journey (apply --plan again in a fresh process). */
function createCompletion(): Assertion[] {
  return [
    completion(1, true)[0],
    a({
      check: "generation.single_runner",
      name: "one runner",
      kind: "equal",
      witness: "docker-api",
      expected: [{ state: "running", operation: OP }],
      actual: [{ state: "running", operation: OP }],
    }),
    a({
      check: "volume.instance_created",
      name: "volume",
      kind: "equal",
      witness: "docker-api+host-fs+state-files",
      expected: { label: "v1", file: "v1" },
      actual: { label: "v1", file: "v1" },
    }),
    a({
      check: "offsets.initial_positions",
      name: "initial positions",
      kind: "equal",
      witness: "kafka-tools",
      expected: [{}, { "0": "0" }],
      actual: [{}, { "0": "0" }],
    }),
    a({
      check: "kafka.topics_created_once",
      name: "topics once",
      kind: "equal",
      witness: "kafka-tools+state-files",
      expected: TOPIC_IDS,
      actual: TOPIC_IDS,
    }),
    a({
      check: "generation.serial",
      name: "serial 1",
      kind: "equal",
      witness: "state-files",
      expected: { before: null, after: 1 },
      actual: { before: null, after: 1 },
    }),
    a({
      check: "state.control_cleared",
      name: "no control",
      kind: "absent",
      witness: "state-files",
      expected: ["control"],
      actual: ["history", "ownership"],
    }),
    ...completion(1, true).filter((x) => x.check === "output.exact" || x.check === "plan.noop"),
  ];
}

/** The checks of a completed connector change. */
function connectorCompletion(site: string): Assertion[] {
  const change = connectorChange(site);
  const before = connectorSerialBefore(change);
  const out: Assertion[] = [completion(1, true)[0]];
  if (change === "delete") {
    out.push(
      a({
        check: "connector.removed",
        name: "gone",
        kind: "absent",
        witness: "connect-rest",
        expected: ["sluice-p-orders_out"],
        actual: [],
      }),
      a({
        check: "kafka.topics_kept",
        name: "topics kept",
        kind: "equal",
        witness: "kafka-tools+docker-api",
        expected: { topic_ids: TOPIC_IDS, runner: ["c1"] },
        actual: { topic_ids: TOPIC_IDS, runner: ["c1"] },
      }),
    );
  } else {
    out.push(a({
      check: "connector.owned_config",
      name: "owned config",
      kind: "equal",
      witness: "connect-rest",
      expected: { names: ["sluice-p-orders_out"], configs: { "sluice-p-orders_out": { a: "1" } } },
      actual: { names: ["sluice-p-orders_out"], configs: { "sluice-p-orders_out": { a: "1" } } },
    }));
  }
  out.push(
    a({
      check: "connector.ownership_recorded",
      name: "ownership",
      kind: "equal",
      witness: "state-files",
      expected: [{ name: "sluice-p-orders_in", kind: "source" }],
      actual: [{ name: "sluice-p-orders_in", kind: "source" }],
    }),
    a({
      check: "generation.serial",
      name: "serial +1",
      kind: "equal",
      witness: "state-files",
      expected: { before, after: before + 1 },
      actual: { before, after: before + 1 },
    }),
    a({
      check: "state.control_cleared",
      name: "no control",
      kind: "absent",
      witness: "state-files",
      expected: ["control"],
      actual: ["history", "ownership"],
    }),
    ...completion(1, true).filter((x) => x.check === "plan.noop"),
  );
  return out;
}

const noControl = () =>
  a({
    check: "state.control_cleared",
    name: "no control",
    kind: "absent",
    witness: "state-files",
    expected: ["control"],
    actual: ["history", "ownership"],
  });

/** The checks of a completed runner removal (the same apply --plan again). */
function removalCompletion(): Assertion[] {
  const volume = { exists: true, label: "v1", file: "v1" };
  return [
    completion(1, true)[0],
    a({
      check: "removal.container_gone",
      name: "no container left",
      kind: "count",
      witness: "docker-api",
      expected: { max: 0 },
      actual: [],
    }),
    a({
      check: "volume.instance_kept",
      name: "volume kept",
      kind: "unchanged",
      witness: "docker-api+host-fs",
      expected: volume,
      actual: volume,
    }),
    a({
      check: "offsets.kept",
      name: "offsets kept",
      kind: "all-equal",
      witness: "kafka-tools",
      expected: { value: CLOSE },
      actual: [CLOSE, CLOSE],
    }),
    a({
      check: "kafka.topics_kept",
      name: "topics kept",
      kind: "unchanged",
      witness: "kafka-tools",
      expected: TOPIC_IDS,
      actual: TOPIC_IDS,
    }),
    a({
      check: "kafka.no_member",
      name: "no member",
      kind: "count",
      witness: "kafka-tools",
      expected: { max: 0 },
      actual: [],
    }),
    a({
      check: "ownership.released",
      name: "released",
      kind: "equal",
      witness: "state-files",
      expected: {
        runners: ["spare"],
        retained: [{ application_id: "app", volume_instance: "v1" }],
      },
      actual: { runners: ["spare"], retained: [{ application_id: "app", volume_instance: "v1" }] },
    }),
    a({
      check: "removal.spare_untouched",
      name: "spare untouched",
      kind: "unchanged",
      witness: "docker-api",
      expected: [{ id: "c2", running: true }],
      actual: [{ id: "c2", running: true }],
    }),
    a({
      check: "generation.serial",
      name: "serial +1",
      kind: "equal",
      witness: "state-files",
      expected: { before: REMOVAL_SERIAL_BEFORE, after: REMOVAL_SERIAL_BEFORE + 1 },
      actual: { before: REMOVAL_SERIAL_BEFORE, after: REMOVAL_SERIAL_BEFORE + 1 },
    }),
    noControl(),
    ...completion(1, true).filter((x) => x.check === "plan.noop"),
  ];
}

/**
 * The checks of a completed destroy (the same apply --plan again): a removal's, without a spare;
 * for a site of the data rows, those of a destroy that deleted the data.
 */
function destroyCompletion(site: string): Assertion[] {
  const variant = destroyVariant(site);
  if (variant === "delete-data") return destroyDataCompletion();
  const before = variant === "connectors"
    ? DESTROY_CONNECTORS_SERIAL_BEFORE
    : DESTROY_SERIAL_BEFORE;
  const renamed: Record<string, string> = {
    "removal.container_gone": "destroy.container_gone",
    "ownership.released": "ownership.destroyed",
  };
  return [
    ...removalCompletion().filter((x) => x.check !== "removal.spare_untouched").map((x) =>
      x.check === "ownership.released"
        ? {
          ...x,
          check: "ownership.destroyed",
          expected: { runners: [], retained: [{ application_id: "app", volume_instance: "v1" }] },
          actual: { runners: [], retained: [{ application_id: "app", volume_instance: "v1" }] },
        }
        : x.check === "generation.serial"
        ? {
          ...x,
          expected: { before, after: before + 1 },
          actual: { before, after: before + 1 },
        }
        : { ...x, check: renamed[x.check] ?? x.check }
    ),
    ...(variant === "connectors"
      ? [a({
        check: "destroy.connectors_gone",
        name: "connectors gone",
        kind: "absent",
        witness: "connect-rest",
        expected: ["sluice-p-orders_in", "sluice-p-orders_out"],
        actual: ["someone-else"],
      })]
      : []),
    a({
      check: "destroy.plan_recreates",
      name: "recreated on the kept volume",
      kind: "equal",
      witness: "sluice",
      expected: { exit: 0, actions: [["create_runner", "v1"]] },
      actual: { exit: 0, actions: [["create_runner", "v1"]] },
    }),
  ];
}

/** The checks of a completed destroy that deleted the data (`--delete-data`). */
function destroyDataCompletion(): Assertion[] {
  const kept = new Set([
    "recovery.completed",
    "destroy.container_gone",
    "kafka.no_member",
    "generation.serial",
    "state.control_cleared",
    "plan.noop",
  ]);
  return [
    ...destroyCompletion("docker.term_destroyed_runner").filter((x) => kept.has(x.check)),
    a({
      check: "volume.deleted",
      name: "volume removed",
      kind: "equal",
      witness: "docker-api",
      expected: { exists: false },
      actual: { exists: false },
    }),
    a({
      check: "offsets.close_until_deleted",
      name: "offsets gone after the group's deletion",
      kind: "equal",
      witness: "kafka-tools",
      expected: { at_deaths: [{}], after: {} },
      actual: { at_deaths: [{}], after: {} },
    }),
    a({
      check: "kafka.group_deleted",
      name: "group gone",
      kind: "absent",
      witness: "kafka-tools",
      expected: ["app"],
      actual: ["other"],
    }),
    a({
      check: "kafka.owned_topics_deleted",
      name: "owned topic deleted",
      kind: "equal",
      witness: "kafka-tools",
      expected: { in: null, out: null },
      actual: { in: null, out: null },
    }),
    a({
      check: "ownership.destroyed",
      name: "nothing owned",
      kind: "equal",
      witness: "state-files",
      expected: { runners: [], retained: [], topics: [] },
      actual: { runners: [], retained: [], topics: [] },
    }),
    a({
      check: "destroy.plan_creates_fresh",
      name: "created from nothing",
      kind: "equal",
      witness: "sluice",
      expected: { exit: 0, topics: ["in", "out"], others: [["create_runner", null]] },
      actual: { exit: 0, topics: ["in", "out"], others: [["create_runner", null]] },
    }),
  ];
}

/** The checks of a completed day-two command (the same command again). */
function dayTwoCompletion(site: string): Assertion[] {
  const skip = dayTwoCommand(site) === "skip-record";
  const skipped = { ...CLOSE, "1": "3" };
  return [
    completion(1, true)[0],
    a({
      check: "runner.same_generation",
      name: "same container",
      kind: "equal",
      witness: "docker-api",
      expected: [{ id: "c1", generation: `${OP}/0`, running: true }],
      actual: [{ id: "c1", generation: `${OP}/0`, running: true }],
    }),
    a({
      check: "audit.restart_recorded_once",
      name: "one restart",
      kind: "equal",
      witness: "state-files",
      expected: [{ container: { id: "c1", exit_code: skip ? 13 : 143 }, after_skip: null }],
      actual: [{ container: { id: "c1", exit_code: skip ? 13 : 143 }, after_skip: null }],
    }),
    ...(skip
      ? [
        a({
          check: "audit.skip_recorded_once",
          name: "one skip",
          kind: "equal",
          witness: "state-files",
          expected: [{ partition: 1, offset: "2" }],
          actual: [{ partition: 1, offset: "2" }],
        }),
        a({
          check: "offsets.skipped_exactly_one",
          name: "one partition by one",
          kind: "equal",
          witness: "kafka-tools",
          expected: skipped,
          actual: skipped,
        }),
        a({
          check: "offsets.stopped_or_skipped",
          name: "stop's or skip's",
          kind: "subset",
          witness: "kafka-tools",
          expected: [CLOSE, skipped],
          actual: [CLOSE, skipped],
        }),
      ]
      : [a({
        check: "offsets.unchanged",
        name: "no offset moved",
        kind: "all-equal",
        witness: "kafka-tools",
        expected: { value: CLOSE },
        actual: [CLOSE, CLOSE],
      })]),
    a({
      check: "generation.serial",
      name: "serial unchanged",
      kind: "equal",
      witness: "state-files",
      expected: { before: 1, after: 1 },
      actual: { before: 1, after: 1 },
    }),
    noControl(),
    ...completion(1, true).filter((x) => x.check === "output.exact" || x.check === "plan.noop"),
  ];
}

/** The checks of an operator case (its decision at `site`, the same decision again). */
function operatorCompletion(site: string): Assertion[] {
  const pre = killed("worker-1", PRE_OPERATOR_FAULT, "fault.pre_operator_kill");
  const noControl = a({
    check: "state.control_cleared",
    name: "no control",
    kind: "absent",
    witness: "state-files",
    expected: ["control"],
    actual: ["history", "ownership"],
  });
  const fresh = a({
    check: "recovery.completed",
    name: "the same decision again",
    kind: "exit-status",
    witness: "process",
    expected: { exit: 0 },
    actual: {
      process: "worker-3",
      exit: 0,
      signal: null,
      timed_out: false,
      pid: 303,
      killed_pids: [101, 202],
    },
  });
  if (operatorDecision(site) === "abandon") {
    const runtime = { containers: [], offsets: CLOSE, topic_ids: TOPIC_IDS };
    return [
      pre,
      fresh,
      a({
        check: "operator.nothing_mutated",
        name: "nothing mutated",
        kind: "unchanged",
        witness: "docker-api+host-fs+kafka-tools",
        expected: runtime,
        actual: runtime,
      }),
      noControl,
      a({
        check: "audit.abandoned_once",
        name: "abandoned once",
        kind: "equal",
        witness: "state-files",
        expected: [OP],
        actual: [OP],
      }),
      a({
        check: "audit.no_receipt",
        name: "no receipt",
        kind: "absent",
        witness: "state-files",
        expected: [OP],
        actual: [],
      }),
      a({
        check: "generation.serial",
        name: "serial unchanged",
        kind: "equal",
        witness: "state-files",
        expected: { before: 1, after: 1 },
        actual: { before: 1, after: 1 },
      }),
      a({
        check: "plan.not_noop",
        name: "never No changes",
        kind: "equal",
        witness: "sluice",
        expected: { noop: false },
        actual: { noop: false },
      }),
    ];
  }
  const accepted = { ...CLOSE, "0": "5" };
  return [
    pre,
    fresh,
    a({
      check: "offsets.moved_to_retained",
      name: "moved to the earliest retained",
      kind: "equal",
      witness: "kafka-tools+kafka-admin",
      expected: accepted,
      actual: accepted,
    }),
    a({
      check: "audit.decision_recorded",
      name: "decision recorded",
      kind: "equal",
      witness: "state-files+kafka-admin",
      expected: [{ operation_id: OP, partitions: [{ partition: 0, from: "3", to: "5" }] }],
      actual: [{ operation_id: OP, partitions: [{ partition: 0, from: "3", to: "5" }] }],
    }),
    a({
      check: "offsets.stopped_close_or_retained",
      name: "close or accepted while stopped",
      kind: "subset",
      witness: "kafka-tools+kafka-admin+state-files",
      expected: [CLOSE, accepted],
      actual: [CLOSE],
    }),
    ...completion(1, true).filter((x) =>
      x.check !== "recovery.completed" && x.check !== "offsets.stopped_equal_close" &&
      x.check !== "lineage.conformant"
    ),
    noControl,
  ];
}

/** An operator case's history: the apply dies stopped, the armed decision dies, then again. */
function operatorHistory(site: string) {
  const h = history(PRE_OPERATOR_FAULT);
  return [
    ...h.slice(0, 2),
    {
      process: "worker-2",
      type: "invoke" as const,
      f: "decision",
      value: { args: [], fault: site },
      time: at(2200),
    },
    {
      process: "worker-2",
      type: "info" as const,
      f: "decision",
      value: { exit: 137, signal: "SIGKILL", fired: site, pid: 202 },
      time: at(2400),
    },
    {
      process: "worker-3",
      type: "ok" as const,
      f: "decision",
      value: { exit: 0, pid: 303 },
      time: at(3000),
    },
  ];
}

function killed(process: string, site: string, check: string): Assertion {
  return a({
    check,
    name: "died at the site",
    kind: "killed-by-signal",
    witness: "process",
    expected: { signal: "SIGKILL", site },
    actual: {
      process,
      signal: "SIGKILL",
      fired: site,
      exit: 137,
      timed_out: false,
      killed_by: "fault",
    },
  });
}

function history(site: string | null) {
  return [
    {
      process: "worker-1",
      type: "invoke" as const,
      f: "apply",
      value: { args: [], fault: site },
      time: at(1000),
    },
    {
      process: "worker-1",
      type: "info" as const,
      f: "apply",
      value: { exit: 137, signal: "SIGKILL", fired: site, pid: 101 },
      time: at(2000),
    },
    {
      process: "worker-2",
      type: "ok" as const,
      f: "resume",
      value: { exit: 0, pid: 202 },
      time: at(3000),
    },
  ];
}

const SAMPLE = {
  after: "worker-1",
  stage: "old_closed",
  old_running: false,
  candidate_running: false,
  offsets: CLOSE,
  time: at(2500),
};

function base(id: string, kind: CaseEvidence["kind"], backend: "local" | "postgres"): CaseEvidence {
  return {
    id,
    kind,
    run_id: RUN,
    boundary: null,
    side: null,
    backend,
    params: {},
    started_at: at(500),
    duration_ms: 5000,
    outcome: "completed",
    history: history(null),
    samples: [SAMPLE],
    setup: [
      a({
        check: "setup.old_output",
        name: "old output",
        kind: "equal",
        witness: "topic-read",
        expected: 4,
        actual: 4,
      }),
    ],
    assertions: [],
    ok: true,
    error: null,
  };
}

function buildCase(probe: ProbeName, id: string): CaseEvidence {
  const i = id.lastIndexOf(":");
  const head = id.slice(0, i);
  const backend = id.slice(i + 1) as "local" | "postgres";
  const c = base(id, PROBE_FILES[probe], backend);
  if (probe === "fault-matrix") {
    const j = head.lastIndexOf(":");
    c.boundary = head.slice(0, j);
    c.side = head.slice(j + 1) as "before" | "after";
    c.history = history(head);
    const journey = matrixJourney(c.boundary);
    const rest = journey === "create"
      ? createCompletion()
      : journey === "connector"
      ? connectorCompletion(c.boundary)
      : journey === "operator"
      ? operatorCompletion(c.boundary)
      : journey === "removal"
      ? removalCompletion()
      : journey === "destroy"
      ? destroyCompletion(c.boundary)
      : journey === "day_two"
      ? dayTwoCompletion(c.boundary)
      : completion(1, true);
    if (
      journey === "create" || journey === "connector" || journey === "removal" ||
      journey === "destroy" || journey === "day_two"
    ) c.samples = [];
    if (journey === "operator") {
      c.history = operatorHistory(head);
      c.assertions = [killed("worker-2", head, "fault.killed_at_site"), ...rest];
    } else c.assertions = [killed("worker-1", head, "fault.killed_at_site"), ...rest];
  } else if (probe === "rejections") {
    const spec = REJECTIONS.find((r) => r.name === head)!;
    const exit = rejectionExit(spec);
    c.params = { code: spec.code, exit, stop_at: spec.stopAt };
    c.outcome = "blocked";
    c.assertions = [
      a({
        check: "rejection.code",
        name: "code",
        kind: "present",
        witness: "sluice",
        expected: [spec.code],
        actual: [spec.code, "BLOCKED_OTHER"],
      }),
      a({
        check: "rejection.exit_status",
        name: `exit ${exit}`,
        kind: "exit-status",
        witness: "process",
        expected: { exit },
        actual: { exit, signal: null, timed_out: false },
      }),
      a({
        check: "rejection.nothing_mutated",
        name: "nothing mutated",
        kind: "unchanged",
        witness: "state-files+docker-api+kafka-tools",
        expected: { state: { serial: 1 }, containers: [{ id: "c1" }] },
        actual: { state: { serial: 1 }, containers: [{ id: "c1" }] },
      }),
    ];
    if (spec.stopAt) {
      const [b, s] = spec.stopAt.split(":");
      c.boundary = b;
      c.side = s as "after";
      c.history = history(spec.stopAt);
      c.assertions.push(killed("worker-1", spec.stopAt, "rejection.stopped_at_site"));
    } else {
      c.samples = [];
      c.assertions.push(
        a({
          check: "rejection.no_operation",
          name: "no operation",
          kind: "absent",
          witness: "state-files",
          expected: ["control"],
          actual: ["history", "ownership"],
        }),
      );
    }
  } else if (probe === "disruption") {
    const spec = DISRUPTIONS.find((d) => `${d.name}:${d.backend}` === id)!;
    c.assertions = completion(1, false);
    if (spec.name === "lock-race") {
      c.assertions.push(
        a({
          check: "race.exit_statuses",
          name: "0 and 5",
          kind: "equal",
          witness: "process",
          expected: [0, 5],
          actual: [0, 5],
        }),
        a({
          check: "race.loser_reports_lock",
          name: "lock",
          kind: "present",
          witness: "sluice",
          expected: ["STATE_LOCK_HELD"],
          actual: ["STATE_LOCK_HELD"],
        }),
        a({
          check: "race.single_operation",
          name: "one op",
          kind: "equal",
          witness: "state-files",
          expected: { n: 1 },
          actual: { n: 1 },
        }),
      );
    } else {
      c.assertions.push(
        a({
          check: "disruption.applied",
          name: "applied",
          kind: "count",
          witness: "process",
          expected: { min: 1 },
          actual: [{ restarted: true }],
        }),
      );
    }
  } else {
    const k = randomKillCases().find((x) => x.id === id)!;
    const delay = randomKillDelay(7, k.index, 20_000);
    c.params = {
      seed: 7,
      index: k.index,
      chain: k.chain,
      position: k.position,
      baseline_ms: 20_000,
      delay_ms: delay,
    };
    c.assertions = [
      a({
        check: "fault.random_kill",
        name: "random kill",
        kind: "killed-by-signal",
        witness: "process",
        expected: { signal: "SIGKILL", killed_by: "harness", delay_ms: delay },
        actual: { process: "worker-1", signal: "SIGKILL", killed_by: "harness", timed_out: false },
      }),
      a({
        check: "group.one_generation_at_a_time",
        name: "one generation at a time",
        kind: "subset",
        witness: "kafka-admin",
        expected: [0, 1],
        actual: [1, 1, 0, 1],
      }),
      a({
        check: "group.generations_seen",
        name: "both generations seen",
        kind: "present",
        witness: "kafka-admin",
        expected: [OLD_GENERATION, NEW_GENERATION],
        actual: [NEW_GENERATION, OLD_GENERATION],
      }),
      ...completion(k.position + 2, true),
    ];
  }
  c.ok = c.assertions.every((x) => x.ok) && c.setup.every((x) => x.ok);
  return c;
}

function evidence(probe: ProbeName, ids: string[] = expectedCaseIds(probe)): EvidenceFile {
  const cases = ids.map((id) => buildCase(probe, id));
  return structuredClone({
    probe,
    schema_version: 2,
    generated_at: at(0),
    duration_ms: 60_000,
    provenance: {
      run_id: RUN,
      commit: COMMIT,
      commit_time: COMMIT_TIME,
      dirty: false,
      dirty_paths: [],
      allow_dirty: false,
      started_at: at(0),
      ended_at: at(60_000),
      argv: [],
      selection: {},
      versions: { deno: "2", java: "17", kafka: "4.1.2", docker: "20.10", postgresql: "15" },
      host: { os: "linux", cpus: 2, load_start: [1, 1, 1], load_end: [1, 1, 1] },
    },
    fault_inventory: inventory(),
    cases,
    summary: summarize(cases) as unknown as Record<string, number>,
  });
}

async function errorsOf(doc: unknown, ctx = context()) {
  return (await fileErrors(JSON.stringify(doc), schema, ctx)).errors;
}

const PROBES = Object.keys(PROBE_FILES) as ProbeName[];

Deno.test("complete evidence of every probe, built from the code's case lists, verifies", async () => {
  for (const probe of PROBES) {
    const doc = evidence(probe);
    assert.deepEqual(validate(schema, schema, doc), [], probe);
    assert.deepEqual(await errorsOf(doc), [], probe);
  }
});

Deno.test("every tampering is rejected, naming the case and the assertion", async () => {
  const applied = new Set<string>();
  for (const probe of PROBES) {
    for (const t of TAMPERINGS) {
      const doc = evidence(probe);
      const target = t.apply(doc);
      if (target === null) continue;
      applied.add(t.name);
      const errors = await errorsOf(doc);
      const where = `${probe}: ${t.name}`;
      assert.ok(errors.length > 0, `${where}: accepted`);
      if (target.caseId) {
        const named = errors.filter((e) => e.includes(target.caseId!));
        assert.ok(
          named.length > 0,
          `${where}: no message names case ${target.caseId}:\n${errors.join("\n")}`,
        );
        if (target.check) {
          assert.ok(
            named.some((e) => e.includes(target.check!)),
            `${where}: no message names ${target.check} for ${target.caseId}:\n${
              errors.join("\n")
            }`,
          );
        }
      }
    }
  }
  assert.deepEqual(
    TAMPERINGS.filter((t) => !applied.has(t.name)).map((t) => t.name),
    [],
    "every tampering applies to some probe's evidence",
  );
});

Deno.test("a case that stopped on an error before any assertion is reported by its error; the rest of its file is still checked", async () => {
  const doc = evidence("rejections");
  const [failed, other] = doc.cases;
  failed.assertions = [];
  failed.setup = [];
  failed.ok = false;
  failed.error = "timed out waiting for RUNNING\n    at prepare (probes/common.ts:1:1)";
  doc.summary = summarize(doc.cases) as unknown as Record<string, number>;
  assert.deepEqual(validate(schema, schema, doc), []);
  const errors = await errorsOf(doc);
  assert.deepEqual(errors, [`case ${failed.id} FAILED: error: timed out waiting for RUNNING`]);
  // a tampering of another case in the same file is still named (not hidden by a malformed file)
  other.assertions = [];
  doc.summary = summarize(doc.cases) as unknown as Record<string, number>;
  const both = await errorsOf(doc);
  assert.ok(both.includes(`case ${other.id}: no assertion recorded`), both.join("\n"));
  assert.ok(both.some((e) => e.startsWith(`case ${other.id}: missing required assertion`)));
});

Deno.test("the issue's tamperings are each rejected with the expected reason", async () => {
  const matrix = evidence("fault-matrix");
  const issue = TAMPERINGS.filter((t) => t.source === "issue");
  assert.equal(issue.length, 6);
  const reasons = [
    /recorded ok=true but (set-)?equal gives false/,
    /^missing case /,
    /missing required assertion/,
    /missing required assertion fault\.killed_at_site/,
    /fault\.killed_at_site .*is not the code's armed site/,
    /generated_at 1999-01-01T00:00:00.000Z is not provenance.started_at/,
  ];
  for (const [i, t] of issue.entries()) {
    const doc = structuredClone(matrix);
    t.apply(doc);
    const errors = await errorsOf(doc);
    assert.ok(errors.some((e) => reasons[i].test(e)), `${t.name}:\n${errors.join("\n")}`);
  }
});

Deno.test("provenance: a commit that is not an ancestor of HEAD, dirty trees and partial runs", async () => {
  const doc = evidence("disruption");
  doc.provenance.commit = NOT_ANCESTOR;
  assert.ok((await errorsOf(doc)).some((e) => /is not an ancestor of HEAD/.test(e)));

  const dirty = evidence("disruption");
  dirty.provenance.dirty = true;
  dirty.provenance.allow_dirty = true;
  dirty.provenance.dirty_paths = ["x.ts"];
  assert.ok((await errorsOf(dirty)).some((e) => /refused without --allow-dirty/.test(e)));
  assert.deepEqual(await errorsOf(dirty, context({ allowDirty: true })), []);
  dirty.provenance.allow_dirty = false;
  assert.ok(
    (await errorsOf(dirty, context({ allowDirty: true }))).some((e) =>
      /without allow_dirty/.test(e)
    ),
  );

  const ids = expectedCaseIds("rejections").filter((id) => id.startsWith("wrong-network:"));
  const partial = evidence("rejections", ids);
  partial.provenance.selection = { only: "wrong-network" };
  assert.ok((await errorsOf(partial)).some((e) => /refused without --allow-partial/.test(e)));
  assert.deepEqual(await errorsOf(partial, context({ allowPartial: true })), []);
  partial.cases.pop();
  partial.summary = summarize(partial.cases) as unknown as Record<string, number>;
  assert.ok(
    (await errorsOf(partial, context({ allowPartial: true }))).some((e) =>
      /^missing case wrong-network:/.test(e)
    ),
    "a case of the recorded selection deleted from a partial file is missing",
  );
});

Deno.test("a suite-tier file is complete for its tier, not partial; its cases are still all required", async () => {
  for (const probe of PROBES) {
    const doc = evidence(probe, expectedCaseIds(probe, "suite"));
    doc.provenance.selection = { tier: "suite" };
    assert.deepEqual(await errorsOf(doc), [], probe);
    doc.cases.pop();
    doc.summary = summarize(doc.cases) as unknown as Record<string, number>;
    assert.ok((await errorsOf(doc)).some((e) => /^missing case /.test(e)), probe);
  }
  // a suite-tier file that claims to be the full run lacks the full list's cases
  const unlabelled = evidence("fault-matrix", expectedCaseIds("fault-matrix", "suite"));
  assert.ok((await errorsOf(unlabelled)).some((e) => /^missing case /.test(e)));
  const unknown = evidence("disruption");
  unknown.provenance.selection = { tier: "most" };
  assert.ok((await errorsOf(unknown).catch((e) => [String(e)])).some((e) => /tier/.test(e)));
});

Deno.test("a rejection's code and exit status are the catalogue's: a secured case's exit 7 or 3 verifies, another refused", async () => {
  const doc = evidence("rejections");
  for (const name of ["admin-password-wrong", "runner-credentials-rotated", "runner-acl-removed"]) {
    const spec = REJECTIONS.find((r) => r.name === name)!;
    assert.equal(spec.secure, true, name);
    const c = doc.cases.find((x) => x.id === `${name}:local`)!;
    const exit = c.assertions.find((x) => x.check === "rejection.exit_status")!;
    assert.deepEqual(exit.expected, { exit: rejectionExit(spec) }, name);
  }
  assert.deepEqual(await errorsOf(doc), []);
  // the exit of another code (4, blocked) for ENV_KAFKA_DENIED (7), a wrong code elsewhere
  const denied = doc.cases.find((x) => x.id === "admin-password-wrong:postgres")!;
  const exit = denied.assertions.find((x) => x.check === "rejection.exit_status")!;
  exit.expected = { exit: 4 };
  exit.actual = { exit: 4, signal: null, timed_out: false };
  exit.ok = judge(exit, conforms).ok;
  const rotated = doc.cases.find((x) => x.id === "runner-credentials-rotated:local")!;
  const code = rotated.assertions.find((x) => x.check === "rejection.code")!;
  code.expected = ["BLOCKED_RUNNER_PERMISSION"];
  code.actual = ["BLOCKED_RUNNER_PERMISSION"];
  code.ok = judge(code, conforms).ok;
  const errors = await errorsOf(doc);
  const has = (id: string, re: RegExp) =>
    assert.ok(
      errors.some((e) => e.includes(id) && re.test(e)),
      `${id} ${re}\n${errors.join("\n")}`,
    );
  has(denied.id, /rejection\.exit_status.*is not the code's exit \{"exit":7\}/);
  has(
    rotated.id,
    /rejection\.code.*is not the code's blocker code \["PLAN_KAFKA_CREDENTIALS_CHANGED"\]/,
  );
});

Deno.test("a matrix case armed in the stopped window must sample while stopped", async () => {
  const doc = evidence("fault-matrix");
  const c = doc.cases.find((x) => stopsRunner(`${x.boundary}:${x.side}`))!;
  c.samples = c.samples.map((s) => ({ ...s, candidate_running: true }));
  c.assertions = c.assertions.filter((x) => x.check !== "offsets.stopped_equal_close");
  const mono = c.assertions.find((x) => x.check === "offsets.monotonic")!;
  mono.actual = [BEFORE, CLOSE, AFTER];
  c.ok = true;
  const errors = await errorsOf(doc);
  assert.ok(
    errors.some((e) =>
      e.includes(c.id) && /no sample was taken while the runner was stopped/.test(e)
    ),
    errors.join("\n"),
  );
});

Deno.test("a random kill's delay is recomputed from the recorded seed", async () => {
  const doc = evidence("random-kill");
  doc.cases[3].params.delay_ms = 1;
  const errors = await errorsOf(doc);
  assert.ok(
    errors.some((e) => e.includes(doc.cases[3].id) && /is not the seed's/.test(e)),
    errors.join("\n"),
  );
});

Deno.test("a random kill's group monitor: a reading of two generations fails it, and its pins hold", async () => {
  const check = (doc: EvidenceFile, name: string) =>
    doc.cases[0].assertions.find((x) => x.check === name)!;
  const id = evidence("random-kill").cases[0].id;
  const cases: Array<[string, (doc: EvidenceFile) => void, RegExp]> = [
    ["two generations at once", (doc) => {
      check(doc, "group.one_generation_at_a_time").actual = [1, 2, 1];
    }, /group\.one_generation_at_a_time.*not allowed: \[2\]/],
    ["no reading at all", (doc) => {
      check(doc, "group.one_generation_at_a_time").actual = [];
    }, /no sample: the list is empty/],
    ["a count of two allowed", (doc) => {
      check(doc, "group.one_generation_at_a_time").expected = [0, 1, 2];
    }, /is not the code's allowed generation counts/],
    ["sluice's own view as the witness", (doc) => {
      check(doc, "group.one_generation_at_a_time").witness = "sluice";
    }, /not the harness's Kafka admin client/],
    ["the new generation never seen", (doc) => {
      check(doc, "group.generations_seen").actual = [OLD_GENERATION];
    }, /group\.generations_seen.*missing/],
    ["one generation named twice", (doc) => {
      check(doc, "group.generations_seen").expected = [OLD_GENERATION, OLD_GENERATION];
    }, /not the old and the new generation/],
    ["the monitor's checks left out", (doc) => {
      doc.cases[0].assertions = doc.cases[0].assertions.filter((x) =>
        !x.check.startsWith("group.")
      );
    }, /missing required assertion group\.one_generation_at_a_time/],
  ];
  for (const [what, tamper, why] of cases) {
    const doc = evidence("random-kill");
    tamper(doc);
    // the file's own verdicts are recomputed: mark them as a careless probe would
    for (const x of doc.cases[0].assertions) x.ok = true;
    const errors = await errorsOf(doc);
    assert.ok(errors.some((e) => e.includes(id) && why.test(e)), `${what}:\n${errors.join("\n")}`);
  }
});

Deno.test("operator cases hold their decision's checks, with the code's pins", async () => {
  const doc = evidence("fault-matrix");
  const abandon = doc.cases.find((c) => c.boundary === "journal.abandon")!;
  const accept = doc.cases.find((c) => c.boundary === "kafka.move_offsets_to_retained")!;
  const decide = doc.cases.find((c) => c.boundary === "journal.operator_decision")!;
  const state = doc.cases.find((c) => c.boundary === "state.postgres.abandon.commit")!;
  abandon.assertions = abandon.assertions.filter((x) => x.check !== "operator.nothing_mutated");
  accept.assertions = accept.assertions.filter((x) => x.check !== "offsets.moved_to_retained");
  // the decision's pre-kill names another site; the abandonment's witness is sluice itself
  const pre = decide.assertions.find((x) => x.check === "fault.pre_operator_kill")!;
  pre.expected = { signal: "SIGKILL", site: "journal.action_started:after" };
  pre.ok = false;
  const mutated = state.assertions.find((x) => x.check === "operator.nothing_mutated")!;
  mutated.witness = "sluice";
  const stopped = accept.assertions.find((x) => x.check === "offsets.stopped_close_or_retained")!;
  stopped.actual = [AFTER];
  stopped.ok = judge(stopped, conforms).ok;
  const errors = await errorsOf(doc);
  const has = (id: string, re: RegExp) =>
    assert.ok(
      errors.some((e) => e.includes(id) && re.test(e)),
      `${id} ${re}\n${errors.join("\n")}`,
    );
  has(abandon.id, /missing required assertion operator\.nothing_mutated/);
  has(accept.id, /missing required assertion offsets\.moved_to_retained/);
  has(accept.id, /stopped_close_or_retained.*the list is not the samples taken while stopped/);
  has(decide.id, /fault\.pre_operator_kill.*is not the code's pre-operator site/);
  has(state.id, /operator\.nothing_mutated.*is not independent of sluice/);
});

Deno.test("create and connector cases hold their journey's checks, with the code's pins", async () => {
  const doc = evidence("fault-matrix");
  const create = doc.cases.find((c) => matrixJourney(c.boundary!) === "create")!;
  const removal = doc.cases.find((c) => c.boundary === "connect.delete_connector")!;
  const update = doc.cases.find((c) => c.boundary === "connect.update_connector_config")!;
  create.assertions = create.assertions.filter((x) => x.check !== "volume.instance_created");
  const serial = create.assertions.find((x) => x.check === "generation.serial")!;
  serial.expected = serial.actual = { before: 0, after: 1 };
  removal.assertions = removal.assertions.filter((x) => x.check !== "connector.removed");
  const upd = update.assertions.find((x) => x.check === "generation.serial")!;
  upd.expected = upd.actual = { before: 1, after: 2 };
  const errors = await errorsOf(doc);
  const has = (id: string, re: RegExp) =>
    assert.ok(
      errors.some((e) => e.includes(id) && re.test(e)),
      `${id} ${re}\n${errors.join("\n")}`,
    );
  has(create.id, /missing required assertion volume\.instance_created/);
  has(create.id, /generation\.serial.*is not the code's serial change/);
  has(removal.id, /missing required assertion connector\.removed/);
  has(update.id, /generation\.serial.*is not the code's serial change/);
});

Deno.test("removal and day-two cases hold their journey's checks, with the code's pins", async () => {
  const doc = evidence("fault-matrix");
  const removal = doc.cases.find((c) => matrixJourney(c.boundary!) === "removal")!;
  const skip = doc.cases.find((c) => c.boundary === "kafka.skip_record_offset")!;
  const restart = doc.cases.find((c) => c.boundary === "docker.start_stopped")!;
  const audit = doc.cases.find((c) => c.boundary === "state.postgres.audit.commit")!;
  removal.assertions = removal.assertions.filter((x) => x.check !== "offsets.kept");
  const gone = removal.assertions.find((x) => x.check === "removal.container_gone")!;
  gone.expected = { max: 1 };
  gone.actual = [{ id: "c1" }];
  gone.ok = judge(gone, conforms).ok;
  const serial = removal.assertions.find((x) => x.check === "generation.serial")!;
  serial.expected = serial.actual = { before: 1, after: 1 };
  skip.assertions = skip.assertions.filter((x) => x.check !== "offsets.skipped_exactly_one");
  restart.assertions = restart.assertions.filter((x) => x.check !== "runner.same_generation");
  const moved = audit.assertions.find((x) => x.check === "generation.serial")!;
  moved.expected = moved.actual = { before: 1, after: 2 };
  const errors = await errorsOf(doc);
  const has = (id: string, re: RegExp) =>
    assert.ok(
      errors.some((e) => e.includes(id) && re.test(e)),
      `${id} ${re}\n${errors.join("\n")}`,
    );
  has(removal.id, /missing required assertion offsets\.kept/);
  has(removal.id, /removal\.container_gone.*is not the code's no container left/);
  has(removal.id, /generation\.serial.*is not the code's serial change/);
  has(skip.id, /missing required assertion offsets\.skipped_exactly_one/);
  has(restart.id, /missing required assertion runner\.same_generation/);
  has(audit.id, /generation\.serial.*is not the code's serial change/);
  // a restart case never requires the skip's checks
  assert.equal(
    errors.some((e) => e.includes(restart.id) && /offsets\.skipped_exactly_one/.test(e)),
    false,
  );
});

Deno.test("the committed verification/ must hold every probe's full-tier run", () => {
  const file = (probe: string, selection: Record<string, string>) =>
    ({ probe, provenance: { selection } }) as unknown as EvidenceFile;
  const docs = new Map<string, EvidenceFile>([
    ["fault-matrix.json", file("fault-matrix", {})],
    ["rejections.json", file("rejections", { tier: "suite" })],
    ["disruption.json", file("disruption", {})],
  ]);
  assert.deepEqual(committedSetErrors(docs), [
    'rejections.json records the selection {"tier":"suite"}: verification/ holds full-tier runs only',
    "random-kill.json is missing: verification/ holds every probe's full-tier run",
  ]);
  docs.set("rejections.json", file("rejections", {}));
  docs.set("random-kill.json", file("random-kill", {}));
  assert.deepEqual(committedSetErrors(docs), []);
});

Deno.test("evidence is stale since its commit when a file the probes exercise changed after it", async () => {
  const git = async (...args: string[]) =>
    new TextDecoder().decode(
      (await new Deno.Command("git", { args, stdout: "piped" }).output()).stdout,
    ).trim();
  const first = (await git("rev-list", "--max-parents=0", "HEAD")).split("\n")[0];
  const changed = await staleSince(first);
  assert.ok(changed.length > 0, "the first commit is older than today's lib/");
  assert.ok(changed.every((f) => EXERCISED.some((d) => f.startsWith(`${d}/`))), changed.join());
  assert.ok(!changed.some((f) => f.startsWith("docs/")));
  await assert.rejects(() => staleSince("0".repeat(40)), /git diff/);
});
