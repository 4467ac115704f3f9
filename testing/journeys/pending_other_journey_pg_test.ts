// test-needs: postgres
// state runner-status and state resume for the pending operation of every journey that is not a
// replacement (issue 28 item 2: one way out for all of them), on the fakes, on both state
// backends' real code: a create, a runner removal and a connector change, each left pending by a
// death before its commit. runner-status names the journey, its last durable boundary, the next
// row of its table and the commands that continue it, writing and mutating nothing; a plan file
// that is not the operation's, or an operation that is not pending, is refused precisely; resume
// continues it with its own journey to its commit, and again verifies it (nothing written).
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { readPlanFile, writePlanFile } from "../../lib/plan/plan_file.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import { operationStatus, resumeOperation } from "../../lib/runtime/pending_operation.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { StateStore } from "../../lib/state/store.ts";
import {
  type CaseWorld,
  openCaseWorld,
  prepareConnector,
  prepareRemoval,
} from "../sweep/fixture.ts";
import { providerMutations } from "./journeys.ts";
import { BACKENDS, openCaseStore } from "./replacement_case.ts";

/** The store, whose commit fails (a death before it): the operation stays pending. */
function stoppingBeforeCommit(store: StateStore): StateStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== "commitOwnership") return v.bind(target);
      return () => Promise.reject(new Error("injected: the process died here"));
    },
  });
}

/** A Docker port whose container removal fails (a death before it): the runner stays stopped. */
function stoppingBeforeRemove(docker: DockerPort): DockerPort {
  return new Proxy(docker, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== "removeContainer") return v.bind(target);
      return () => Promise.reject(new Error("injected: the process died here"));
    },
  });
}

/** A port whose method `name` fails (a death before that mutation). */
function failing<T extends object>(port: T, name: string): T {
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== name) return v.bind(target);
      return () => Promise.reject(new Error("injected: the process died here"));
    },
  });
}

type Journey = "create" | "runner_removal" | "connector_change";

/** The journey's plan file, written, and the project it applies to. */
async function prepared(cw: CaseWorld, journey: Journey): Promise<{ dir: string; path: string }> {
  if (journey === "runner_removal") {
    return { dir: cw.project.dir, path: (await prepareRemoval(cw)).planPath };
  }
  if (journey === "connector_change") {
    return { dir: cw.pipeline!.dir, path: (await prepareConnector(cw, "create")).planPath };
  }
  const dir = cw.project.dir;
  const r = await plan({ dir, ...cw.deps });
  const path = `${dir}/create.plan.json`;
  await writePlanFile(path, r.plan);
  return { dir, path };
}

async function refused(call: () => Promise<unknown>): Promise<SluiceError> {
  const e = await call().then(() => null, (x) => x);
  assert.ok(e instanceof SluiceError, String(e));
  return e;
}

for (const backend of BACKENDS) {
  for (const journey of ["create", "runner_removal", "connector_change"] as const) {
    Deno.test(`[${backend}] a pending ${journey}: runner-status names its next row and commands, resume continues it with its own journey`, async () => {
      await using cw = await openCaseWorld({
        backend,
        seed: crypto.randomUUID(),
        pipeline: journey === "connector_change",
      });
      const { dir, path } = await prepared(cw, journey);
      const { plan: p, sha256 } = await readPlanFile(path);
      const store = await openCaseStore(cw);
      try {
        await apply({
          dir,
          plan: p,
          planSha256: sha256,
          ...cw.deps,
          store: stoppingBeforeCommit(store),
        })
          .then(() => assert.fail("the operation finished"), () => {});
        const pending = (await store.load()).control?.opened;
        assert.equal(pending?.kind, journey);
        const id = pending!.operation_id;
        const before = await store.load();
        const mutations = providerMutations(cw);
        const options = { dir, planPath: path, operationId: id, ...cw.deps };

        // read-only: the journey, its last durable boundary, the next row, the commands
        const report = await operationStatus(options);
        assert.equal(report.journey, journey);
        assert.equal(report.operation_id, id);
        assert.ok(report.state === "in_progress" || report.state === "interrupted", report.state);
        assert.equal(report.last_boundary, "intent");
        assert.equal(report.next.step, "commit", JSON.stringify(report.next));
        assert.equal(report.next.row, "commit");
        assert.match(report.next.table_row ?? "", /^requires .*; next: commit /);
        assert.deepEqual(report.blockers, []);
        assert.match(
          report.commands.resume,
          new RegExp(`^sluice state resume .*--plan ${path} --operation-id ${id}$`),
        );
        assert.match(report.commands.status, /^sluice state runner-status /);

        // another plan file, another operation: precise refusals
        const other = `${dir}/other.plan.json`;
        await writePlanFile(other, (await plan({ dir, ...cw.deps })).plan);
        for (const call of [operationStatus, resumeOperation]) {
          const e = await refused(() => call({ ...options, planPath: other }));
          assert.equal(e.code, "BLOCKED_PLAN_MISMATCH", e.message);
          assert.match(
            e.message,
            new RegExp(`operation ${id} \\(${journey}\\) was started from plan ${sha256}`),
          );
          const none = await refused(() => call({ ...options, operationId: crypto.randomUUID() }));
          assert.equal(none.code, "BLOCKED_NO_PENDING_OPERATION", none.message);
          assert.match(none.message, new RegExp(`the pending operation is ${id} \\(${journey}\\)`));
        }
        assert.equal(providerMutations(cw), mutations, "nothing mutated");
        const after = await store.load();
        assert.deepEqual(after.control, before.control, "nothing written");
        assert.deepEqual(after.history, before.history, "nothing written");

        // the way out: resume continues the same operation to its commit
        const resumed = await resumeOperation(options);
        assert.equal(resumed.kind, "apply");
        if (resumed.kind !== "apply") return;
        assert.equal(resumed.result.operation_id, id);
        assert.equal(resumed.result.already_applied, false);
        assert.equal(resumed.plan_sha256, sha256);
        const done = await store.load();
        assert.equal(done.control, null);

        // again: verified, nothing written; and runner-status says completed
        const again = await resumeOperation(options);
        assert.equal(again.kind === "apply" && again.result.already_applied, true);
        assert.equal(again.kind === "apply" && again.result.operation_id, id);
        const completed = await operationStatus(options);
        assert.equal(completed.state, "completed");
        assert.equal(completed.next.step, "complete");
        assert.deepEqual((await store.load()).history, done.history, "nothing written");
      } finally {
        await store.close();
      }
    });
  }

  Deno.test(`[${backend}] a pending removal whose runner closed cleanly: runner-status names remove_container, plan says only the pending operation (no 'sluice restart'), resume finishes it`, async () => {
    await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID() });
    const change = await prepareRemoval(cw);
    const dir = cw.project.dir;
    const { plan: p, sha256 } = await readPlanFile(change.planPath);
    await apply({
      dir,
      plan: p,
      planSha256: sha256,
      ...cw.deps,
      docker: stoppingBeforeRemove(cw.deps.docker!),
    }).then(() => assert.fail("the removal finished"), () => {});
    const store = await openCaseStore(cw);
    try {
      const id = (await store.load()).control!.opened.operation_id;
      const options = { dir, planPath: change.planPath, operationId: id, ...cw.deps };
      const report = await operationStatus(options);
      assert.equal(report.journey, "runner_removal");
      assert.equal(report.next.step, "remove_container", JSON.stringify(report.next));
      assert.match(report.next.detail, /closed cleanly/);

      // the planner names the pending removal and its way out, and never suggests starting the
      // runner it is taking down again
      const planned = (await plan({ dir, ...cw.deps })).plan;
      const codes = planned.blockers.map((b) => b.code);
      assert.ok(codes.includes("BLOCKED_OPERATION_PENDING"), codes.join(","));
      assert.ok(!codes.includes("BLOCKED_RUNNER_NOT_RUNNING"), codes.join(","));
      assert.ok(
        planned.blockers.every((b) => !b.message.includes("sluice restart")),
        JSON.stringify(planned.blockers),
      );

      const resumed = await resumeOperation(options);
      assert.equal(resumed.kind === "apply" && resumed.result.operation_id, id);
      assert.equal((await store.load()).control, null);
      assert.equal(
        cw.world.control.mutations().filter((m) => m.op === "removeContainer").length > 0,
        true,
      );
    } finally {
      await store.close();
    }
  });

  // each journey killed before its first mutation after the intent: runner-status names that row
  // (read from a fresh observation, not from the table's order alone), and resume goes on from it
  const FIRST: Record<
    Journey,
    { row: string; deps: (cw: CaseWorld) => Partial<CaseWorld["deps"]> }
  > = {
    create: {
      row: "create_topic",
      deps: (cw) => ({ kafka: failing(cw.deps.kafka!, "createTopic") }),
    },
    runner_removal: {
      row: "term_runner",
      deps: (cw) => ({ docker: failing(cw.deps.docker!, "signalTerm") }),
    },
    connector_change: {
      row: "create_connector",
      deps: (cw) => ({
        connect: (c) => failing(cw.deps.connect!(c), "createConnector"),
      }),
    },
  };
  for (const journey of ["create", "runner_removal", "connector_change"] as const) {
    Deno.test(`[${backend}] a ${journey} killed before its first mutation: runner-status names ${FIRST[journey].row}, resume finishes it`, async () => {
      await using cw = await openCaseWorld({
        backend,
        seed: crypto.randomUUID(),
        pipeline: journey === "connector_change",
      });
      const { dir, path } = await prepared(cw, journey);
      const { plan: p, sha256 } = await readPlanFile(path);
      await apply({ dir, plan: p, planSha256: sha256, ...cw.deps, ...FIRST[journey].deps(cw) })
        .then(() => assert.fail("the operation finished"), () => {});
      const store = await openCaseStore(cw);
      try {
        const id = (await store.load()).control!.opened.operation_id;
        const options = { dir, planPath: path, operationId: id, ...cw.deps };
        const report = await operationStatus(options);
        assert.equal(report.journey, journey);
        assert.equal(report.next.step, FIRST[journey].row, JSON.stringify(report.next));
        const resumed = await resumeOperation(options);
        assert.equal(resumed.kind === "apply" && resumed.result.operation_id, id);
        assert.equal((await store.load()).control, null);
      } finally {
        await store.close();
      }
    });
  }
}
