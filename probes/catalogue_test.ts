/**
 * The probes' case lists as the code derives them: the suite tier is a declared part of the
 * full list, the matrix arms only sites its journeys cross on the backends they exist on, and
 * no site of the inventory is left without a crash case (the real matrix or the crash sweep).
 */
import assert from "node:assert/strict";
import { faultInventory, type Journey } from "../lib/protocol/inventory.ts";
import { JOURNEY_DESCRIPTORS } from "../lib/protocol/journeys.ts";
import { operatorSites } from "../lib/protocol/operator.ts";
import { sweepCases } from "../testing/sweep/cases.ts";
import {
  armsPlan,
  BACKENDS,
  dayTwoCommand,
  expectedCaseIds,
  MATRIX_JOURNEYS,
  matrixArms,
  matrixJourney,
  matrixPoints,
  operatorDecision,
  PROBE_FILES,
  type ProbeName,
  requiredChecks,
  SIDES,
  stopsRunner,
  SUITE_MATRIX,
} from "./catalogue.ts";
import { stateOnlyPoints } from "../lib/protocol/state_sites.ts";
import type { CaseEvidence } from "./evidence.ts";

Deno.test("every probe's suite tier is a non-empty part of its full list, without repeats", () => {
  for (const probe of Object.keys(PROBE_FILES) as ProbeName[]) {
    const full = expectedCaseIds(probe, "full");
    const suite = expectedCaseIds(probe, "suite");
    assert.ok(suite.length > 0, probe);
    assert.equal(new Set(full).size, full.length, probe);
    assert.equal(new Set(suite).size, suite.length, probe);
    for (const id of suite) assert.ok(full.includes(id), `${probe}: ${id} not in the full list`);
  }
});

Deno.test("the suite runs every rejection once, the backends in turn; the full tier each on both", () => {
  const suite = expectedCaseIds("rejections", "suite");
  const full = expectedCaseIds("rejections", "full");
  const names = [...new Set(full.map((id) => id.slice(0, id.lastIndexOf(":"))))];
  assert.equal(full.length, names.length * BACKENDS.length);
  assert.deepEqual(suite.map((id) => id.slice(0, id.lastIndexOf(":"))).sort(), [...names].sort());
  for (const backend of BACKENDS) {
    assert.ok(suite.filter((id) => id.endsWith(`:${backend}`)).length >= 6, backend);
  }
});

Deno.test("the suite's matrix is one point per journey and state backend, each in its journey", () => {
  const suite = matrixPoints("suite");
  assert.equal(suite.length, SUITE_MATRIX.length);
  const keys = SUITE_MATRIX.map((r) => `${r.journey}:${r.backend}`);
  assert.equal(new Set(keys).size, keys.length, "one point per journey and backend");
  for (const j of MATRIX_JOURNEYS) {
    for (const backend of BACKENDS) assert.ok(keys.includes(`${j}:${backend}`), `${j} ${backend}`);
  }
  for (const r of SUITE_MATRIX) {
    const site = r.point.slice(0, r.point.lastIndexOf(":"));
    assert.equal(matrixJourney(site), r.journey, `${r.point} is crossed first by ${r.journey}`);
    assert.ok(suite.some((m) => m.point === r.point && m.backend === r.backend), r.point);
    assert.ok(r.shows.length > 40, `${r.point} says what only the real services show`);
  }
  // the replacement's suite case dies inside the stopped window (samples while stopped)
  assert.ok(SUITE_MATRIX.some((r) => r.journey === "replacement" && stopsRunner(r.point)));
  // both decisions of the operator
  assert.deepEqual(
    SUITE_MATRIX.filter((r) => r.journey === "operator")
      .map((r) => operatorDecision(r.point.slice(0, r.point.lastIndexOf(":")))).sort(),
    ["abandon", "accept-retention-loss"],
  );
  // the suite is a part of the full tier, in its order
  const ids = suite.map((m) => `${m.point}:${m.backend}`);
  assert.deepEqual(
    matrixPoints("full").map((m) => `${m.point}:${m.backend}`).filter((id) => ids.includes(id)),
    ids,
  );
});

Deno.test("the matrix's journeys are the registry's, and every registered site has its journey's matrix case on each backend", () => {
  const crossings = [...new Set(JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings.map((c) => c.by)))];
  assert.ok(crossings.length >= 7, "the registry is read");
  assert.deepEqual([...MATRIX_JOURNEYS], crossings);
  const keys = new Set(SUITE_MATRIX.map((r) => `${r.journey}:${r.backend}`));
  for (const e of faultInventory()) {
    for (const backend of BACKENDS) {
      assert.ok(
        keys.has(`${e.journeys[0]}:${backend}`),
        `${e.site.name}: its journey ${
          e.journeys[0]
        } has no matrix case on ${backend} (SUITE_MATRIX)`,
      );
    }
  }
  // a site of a journey with no matrix case is not armed (never in another journey's harness)
  const [first] = faultInventory();
  assert.equal(matrixArms(first), true);
  assert.equal(matrixArms({ ...first, journeys: ["toy" as Journey] }), false);
});

Deno.test("no site is left without a crash case: the crash sweep crosses every one on every backend", () => {
  const swept = new Set(sweepCases().map((c) => `${c.site}:${c.side}:${c.backend}`));
  for (const e of faultInventory()) {
    for (const backend of e.site.backends ?? BACKENDS) {
      for (const side of SIDES) {
        assert.ok(swept.has(`${e.site.name}:${side}:${backend}`), `${e.site.name}:${side}`);
      }
    }
  }
});

Deno.test("every test run crashes every site once over the fakes, and each state only the state layer leaves", () => {
  const suite = sweepCases({ tier: "suite" });
  const ids = suite.map((c) => `${c.site}:${c.side}:${c.backend}`);
  assert.equal(new Set(ids).size, ids.length);
  for (const e of faultInventory()) {
    const mine = suite.filter((c) => c.site === e.site.name);
    assert.ok(mine.length >= 1, e.site.name);
    for (const c of mine) assert.ok((e.site.backends ?? BACKENDS).includes(c.backend), c.site);
  }
  // each side on each backend across the sites
  for (const side of SIDES) {
    for (const backend of BACKENDS) {
      assert.ok(suite.some((c) => c.side === side && c.backend === backend), `${side} ${backend}`);
    }
  }
  // the states only a death inside the state layer leaves, written out by hand
  const stateOnly = [
    // the store's creation, which only the first plan writes
    "state.local.init.store.link:after:local",
    // every file of a multi-file local write made visible, the next one not yet written
    "state.local.commit_ownership.history.rename:after:local",
    "state.local.commit_ownership.ownership.rename:after:local",
    "state.local.interrupt.control.rename:after:local",
    "state.local.resume.history.rename:after:local",
    "state.local.finalize.history.rename:after:local",
    "state.local.finalize.ownership.rename:after:local",
    "state.local.decide.control.rename:after:local",
    "state.local.abandon.history.rename:after:local",
    // a dead lock holder, before and after its work; a break that died
    "lock.local.acquire:after:local",
    "lock.local.release:before:local",
    "lock.local.break:after:local",
    "lock.postgres.acquire:after:postgres",
    "lock.postgres.release:before:postgres",
  ];
  assert.deepEqual(
    stateOnlyPoints().map((p) => `${p.site}:${p.side}:${p.backend}`).sort(),
    [...stateOnly].sort(),
  );
  for (const id of stateOnly) assert.ok(ids.includes(id), id);
  // the suite is a part of the sweep's full list
  const full = new Set(sweepCases().map((c) => `${c.site}:${c.side}:${c.backend}`));
  for (const id of ids) assert.ok(full.has(id), id);
});

Deno.test("the matrix arms each site in the journey that first crosses it; init in the plan", () => {
  assert.equal(matrixJourney("journal.intent"), "replacement");
  assert.equal(matrixJourney("journal.resume"), "resume");
  assert.equal(matrixJourney("kafka.create_topic"), "create");
  assert.equal(matrixJourney("state.local.commit_ownership.control.unlink"), "create");
  assert.equal(matrixJourney("state.postgres.init.commit"), "create");
  assert.equal(matrixJourney("connect.delete_connector"), "connector");
  assert.equal(matrixJourney("journal.abandon"), "operator");
  assert.equal(matrixJourney("kafka.move_offsets_to_retained"), "operator");
  assert.equal(matrixJourney("state.local.decide.history.rename"), "operator");
  // the break of a dead worker's lock: in `state runner-status --break-stale-lock` after a
  // resume-only death; removal and day two in their own journeys
  assert.equal(matrixJourney("lock.local.break"), "resume");
  assert.equal(matrixJourney("docker.term_removed_runner"), "removal");
  assert.equal(matrixJourney("state.commit_removal"), "removal");
  assert.equal(matrixJourney("kafka.skip_record_offset"), "day_two");
  assert.equal(matrixJourney("state.local.audit.history.rename"), "day_two");
  assert.equal(dayTwoCommand("journal.record_skipped"), "skip-record");
  assert.equal(dayTwoCommand("kafka.skip_record_offset"), "skip-record");
  assert.equal(dayTwoCommand("docker.start_stopped"), "restart");
  assert.equal(dayTwoCommand("state.postgres.audit.commit"), "restart");
  assert.ok(armsPlan("state.local.init.store.temp") && armsPlan("state.postgres.init.commit"));
  assert.equal(armsPlan("state.local.commit_ownership.history.temp"), false);
});

Deno.test("a create case requires no old runner and no offsets while stopped; a removal requires the connector gone", () => {
  const matrixCase = (boundary: string): CaseEvidence => ({
    id: `${boundary}:after:local`,
    kind: "matrix",
    run_id: "r",
    boundary,
    side: "after",
    backend: "local",
    params: {},
    started_at: "",
    duration_ms: 0,
    outcome: null,
    history: [],
    // a sample in which nothing runs (a create's death before its runner started)
    samples: [{
      after: "worker-1",
      stage: null,
      old_running: false,
      candidate_running: false,
      offsets: {},
      time: "",
    }],
    setup: [],
    assertions: [],
    ok: true,
    error: null,
  });
  const create = requiredChecks(matrixCase("docker.create_volume")).map((r) => r.check);
  for (const check of ["fault.killed_at_site", "recovery.completed", "plan.noop"]) {
    assert.ok(create.includes(check), check);
  }
  for (const check of ["offsets.stopped_equal_close", "generation.single_candidate"]) {
    assert.equal(create.includes(check), false, check);
  }
  const removal = requiredChecks(matrixCase("connect.delete_connector")).map((r) => r.check);
  assert.ok(removal.includes("connector.removed") && removal.includes("kafka.topics_kept"));
  assert.equal(removal.includes("output.exact"), false);
});

Deno.test("the full tier arms every site the operator's commands cross first, both sides, its backends", () => {
  const full = matrixPoints("full");
  const operatorEntries = faultInventory().filter((e) => e.journeys[0] === "operator");
  assert.equal(operatorEntries.length, 16);
  assert.deepEqual(
    operatorEntries.filter((e) => operatorSites().some((s) => s.name === e.site.name)).length,
    operatorSites().length,
  );
  for (const e of operatorEntries) {
    const backends = e.site.backends ?? BACKENDS;
    const cases = full.filter((m) => m.point.startsWith(`${e.site.name}:`));
    assert.equal(cases.length, backends.length * SIDES.length, e.site.name);
    assert.notEqual(operatorDecision(e.site.name), null, e.site.name);
  }
});

Deno.test("an operator case requires its decision's checks, pinned to the stopped apply", () => {
  const operatorCase = (boundary: string): CaseEvidence => ({
    id: `${boundary}:before:postgres`,
    kind: "matrix",
    run_id: "r",
    boundary,
    side: "before",
    backend: "postgres",
    params: {},
    started_at: "",
    duration_ms: 0,
    outcome: null,
    history: [],
    samples: [],
    setup: [],
    assertions: [],
    ok: true,
    error: null,
  });
  const accept = requiredChecks(operatorCase("journal.operator_decision")).map((r) => r.check);
  for (
    const check of [
      "fault.killed_at_site",
      "fault.pre_operator_kill",
      "offsets.moved_to_retained",
      "audit.decision_recorded",
      "offsets.stopped_close_or_retained",
      "output.exact",
      "generation.serial",
      "plan.noop",
    ]
  ) assert.ok(accept.includes(check), check);
  assert.equal(accept.includes("offsets.stopped_equal_close"), false);
  const abandon = requiredChecks(operatorCase("state.postgres.abandon.commit"));
  const names = abandon.map((r) => r.check);
  for (
    const check of [
      "operator.nothing_mutated",
      "audit.abandoned_once",
      "audit.no_receipt",
      "plan.not_noop",
    ]
  ) assert.ok(names.includes(check), check);
  for (const check of ["output.exact", "plan.noop", "generation.single_candidate"]) {
    assert.equal(names.includes(check), false, check);
  }
  const serial = abandon.find((r) => r.check === "generation.serial")!;
  const c = operatorCase("state.postgres.abandon.commit");
  const at = (expected: unknown) => ({
    check: "generation.serial",
    name: "",
    kind: "equal" as const,
    witness: "state-rows" as const,
    expected,
    actual: expected,
    ok: true,
  });
  assert.equal(serial.pin!(at({ before: 1, after: 1 }), c), null);
  assert.notEqual(serial.pin!(at({ before: 1, after: 2 }), c), null);
});

Deno.test("the real matrix arms every site of the inventory: the full tier is every site × side × backend", () => {
  const full = matrixPoints("full");
  const inv = faultInventory();
  assert.equal(inv.filter(matrixArms).length, inv.length);
  const expected = inv.reduce((n, e) => n + (e.site.backends ?? BACKENDS).length * SIDES.length, 0);
  assert.equal(full.length, expected);
});

Deno.test("removal and day-two cases require their journey's checks; a restart never the skip's", () => {
  const matrixCase = (boundary: string): CaseEvidence => ({
    id: `${boundary}:before:local`,
    kind: "matrix",
    run_id: "r",
    boundary,
    side: "before",
    backend: "local",
    params: {},
    started_at: "",
    duration_ms: 0,
    outcome: null,
    history: [],
    samples: [],
    setup: [],
    assertions: [],
    ok: true,
    error: null,
  });
  const names = (site: string) => requiredChecks(matrixCase(site)).map((r) => r.check);
  const removal = names("docker.remove_removed_runner");
  for (
    const check of [
      "fault.killed_at_site",
      "recovery.completed",
      "removal.container_gone",
      "volume.instance_kept",
      "offsets.kept",
      "kafka.topics_kept",
      "ownership.released",
      "generation.serial",
      "plan.noop",
    ]
  ) assert.ok(removal.includes(check), check);
  assert.equal(removal.includes("output.exact"), false);
  const skip = names("journal.record_skipped");
  const restart = names("state.local.audit.history.temp");
  for (const check of ["offsets.skipped_exactly_one", "audit.skip_recorded_once"]) {
    assert.ok(skip.includes(check), check);
    assert.equal(restart.includes(check), false, check);
  }
  for (const check of ["runner.same_generation", "audit.restart_recorded_once", "output.exact"]) {
    assert.ok(skip.includes(check) && restart.includes(check), check);
  }
  assert.ok(restart.includes("offsets.unchanged"));
  // the break is a resume-only replacement case: the replacement's completion
  assert.ok(names("lock.local.break").includes("generation.single_candidate"));
});
