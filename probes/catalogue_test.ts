/**
 * The probes' case lists as the code derives them: the suite tier is a declared part of the
 * full list, the matrix arms only sites its journeys cross on the backends they exist on, and
 * no site of the inventory is left without a crash case (the real matrix or the crash sweep).
 */
import assert from "node:assert/strict";
import { faultInventory } from "../lib/fault/inventory.ts";
import { replacementSites } from "../lib/protocol/replacement.ts";
import { createSites } from "../lib/protocol/create.ts";
import { connectorSites } from "../lib/protocol/connector.ts";
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
  suiteSites,
  suiteStatePoints,
} from "./catalogue.ts";
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

Deno.test("the suite runs every rejection on both state backends, as the full tier does", () => {
  const suite = expectedCaseIds("rejections", "suite");
  assert.deepEqual(suite, expectedCaseIds("rejections", "full"));
  const names = new Set(suite.map((id) => id.slice(0, id.lastIndexOf(":"))));
  for (const name of names) {
    for (const backend of BACKENDS) assert.ok(suite.includes(`${name}:${backend}`), name);
  }
  assert.equal(suite.length, names.size * BACKENDS.length);
});

Deno.test("the suite's matrix crosses every protocol site once, each side and backend across them", () => {
  const suite = matrixPoints("suite");
  const seen: string[] = [];
  for (const site of replacementSites()) {
    const mine = suite.filter((m) => m.point.startsWith(`${site.name}:`));
    assert.equal(mine.length, 1, site.name);
    seen.push(`${mine[0].point.slice(site.name.length + 1)}:${mine[0].backend}`);
  }
  for (const side of SIDES) {
    for (const backend of BACKENDS) assert.ok(seen.includes(`${side}:${backend}`), seen.join());
  }
});

Deno.test("the full matrix arms each armed site on exactly the backends it exists on", () => {
  const full = matrixPoints("full");
  for (const e of faultInventory()) {
    const mine = full.filter((m) => m.point.startsWith(`${e.site.name}:`));
    if (!matrixArms(e)) {
      assert.equal(mine.length, 0, e.site.name);
      continue;
    }
    const backends = e.site.backends ?? BACKENDS;
    assert.equal(mine.length, backends.length * SIDES.length, e.site.name);
    for (const m of mine) assert.ok(backends.includes(m.backend), `${e.site.name} ${m.backend}`);
  }
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

Deno.test("the suite arms every create and connector protocol site once, alternating sides and backends", () => {
  const suite = matrixPoints("suite");
  const seen: string[] = [];
  const sites = [...createSites(), ...connectorSites()].filter((s) =>
    matrixJourney(s.name) === "create" || matrixJourney(s.name) === "connector"
  );
  assert.equal(sites.length, 13);
  for (const site of sites) {
    const mine = suite.filter((m) => m.point.startsWith(`${site.name}:`));
    assert.equal(mine.length, 1, site.name);
    seen.push(`${mine[0].point.slice(site.name.length + 1)}:${mine[0].backend}`);
  }
  // every side on every backend, in turn
  for (const side of SIDES) {
    for (const backend of BACKENDS) assert.ok(seen.includes(`${side}:${backend}`), seen.join());
  }
  // the store's creation (no protocol site wraps it): its visible step in the suite, all in full
  assert.deepEqual(
    suite.filter((m) => m.point.startsWith("state.local.init.")).map((m) => m.point),
    ["state.local.init.store.link:after"],
  );
  for (const step of ["temp", "link", "dirsync"]) {
    for (const side of SIDES) {
      const point = `state.local.init.store.${step}:${side}`;
      assert.ok(matrixPoints("full").some((m) => m.point === point), point);
    }
  }
});

Deno.test("the suite arms every journey's protocol site exactly once, on a backend it exists on, and each state only a death in the state layer leaves", () => {
  const suite = matrixPoints("suite");
  const armed = faultInventory().filter(matrixArms);
  const protocol = suiteSites();
  const siteOf = (point: string) => point.slice(0, point.lastIndexOf(":"));
  const statePoints = suiteStatePoints();
  // each armed protocol site once and each state-layer point once: as many cases as those
  const mine = armed.filter((e) => protocol.has(e.site.name) || statePoints.has(e.site.name));
  assert.ok(mine.length >= 38 + 14, `${mine.length} sites`);
  assert.equal(suite.length, mine.length);
  const sites = suite.map((m) => siteOf(m.point));
  assert.deepEqual([...sites].sort(), mine.map((e) => e.site.name).sort());
  for (const m of suite) {
    const e = armed.find((x) => x.site.name === siteOf(m.point))!;
    assert.ok((e.site.backends ?? BACKENDS).includes(m.backend), `${m.point} on ${m.backend}`);
  }
  // every journey the matrix drives has its sites in the suite, the removal and day two too
  for (const j of MATRIX_JOURNEYS) {
    if (j === "resume") continue; // the replacement's resume-only sites: its table's, above
    assert.ok(sites.some((s) => matrixJourney(s) === j), j);
  }
  // the state layer's writes and lock operations: every one armed in full, both sides; in the
  // suite exactly the points that leave a state no protocol site leaves, on their own backend
  const stateLayer = armed.filter((x) =>
    (x.site.kind === "lock" || x.site.kind === "state") && !protocol.has(x.site.name)
  );
  assert.ok(stateLayer.length > 0);
  const full = matrixPoints("full");
  for (const e of stateLayer) {
    for (const side of SIDES) assert.ok(full.some((m) => m.point === `${e.site.name}:${side}`));
  }
  const stateCases = suite.filter((m) => stateLayer.some((e) => e.site.name === siteOf(m.point)))
    .map((m) => `${m.point}:${m.backend}`);
  assert.deepEqual(
    stateCases.sort(),
    [
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
    ].sort(),
  );
  // a finalize interrupted between its receipt and its ownership (the stranded state)
  assert.ok(sites.includes("state.local.finalize.history.rename"));
  // both sides on both backends among the sites existing on both
  const both = suite.filter((m) =>
    !armed.find((x) => x.site.name === siteOf(m.point))!.site.backends
  );
  for (const side of SIDES) {
    for (const backend of BACKENDS) {
      assert.ok(both.some((m) => m.point.endsWith(`:${side}`) && m.backend === backend), side);
    }
  }
  // the suite is a part of the full tier, in its order
  const ids = suite.map((m) => `${m.point}:${m.backend}`);
  assert.deepEqual(
    full.map((m) => `${m.point}:${m.backend}`).filter((id) => ids.includes(id)),
    ids,
  );
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

Deno.test("the suite arms each operator site once (three cases), each decision, and the state between a decision's two files", () => {
  const suite = matrixPoints("suite");
  const full = matrixPoints("full");
  const protocol = new Set(operatorSites().map((s) => s.name));
  const mine = suite.filter((m) => protocol.has(m.point.slice(0, m.point.lastIndexOf(":"))));
  assert.deepEqual(
    mine.map((m) => m.point.slice(0, m.point.lastIndexOf(":"))).sort(),
    operatorSites().map((s) => s.name).sort(),
  );
  // both decisions, both sides and both backends among the three
  const sites = mine.map((m) => m.point.slice(0, m.point.lastIndexOf(":")));
  assert.deepEqual(
    [...new Set(sites.map(operatorDecision))].sort(),
    ["abandon", "accept-retention-loss"],
  );
  assert.deepEqual([...new Set(mine.map((m) => m.point.split(":").at(-1)))].sort(), [
    "after",
    "before",
  ]);
  assert.deepEqual([...new Set(mine.map((m) => m.backend))].sort(), ["local", "postgres"]);
  // the full tier: every site the operator's commands cross first, both sides, its backends
  const operatorEntries = faultInventory().filter((e) => e.journeys[0] === "operator");
  assert.equal(operatorEntries.length, 16);
  for (const e of operatorEntries) {
    const backends = e.site.backends ?? BACKENDS;
    const cases = full.filter((m) => m.point.startsWith(`${e.site.name}:`));
    assert.equal(cases.length, backends.length * SIDES.length, e.site.name);
    assert.notEqual(operatorDecision(e.site.name), null, e.site.name);
  }
  // of the decision's own state writes, the suite arms the one between its two files (every
  // step of both in full)
  assert.deepEqual(
    suite.filter((m) => m.point.startsWith("state.local.decide.")).map((m) => m.point),
    ["state.local.decide.control.rename:after"],
  );
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
  // the suite: each journey's protocol sites once and the state layer's points (see above)
  assert.equal(matrixPoints("suite").length, suiteSites().size + suiteStatePoints().size);
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
