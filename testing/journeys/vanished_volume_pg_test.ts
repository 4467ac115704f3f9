// "It never creates a missing volume" (contract row C21; issue 26 item 5): Docker's create makes
// an empty, unlabelled volume when the named one is gone, so the candidate's create checks the
// state volume right before and right after it. A volume removed after the last observation is
// refused before the create; one removed in the instant before the create reaches the daemon is
// undone — the candidate and the volume Docker made — and refused. Either way the replacement
// stops with BLOCKED_VOLUME_MISSING at old_removed, leaves no candidate and no new volume, and
// names the way out. On the fakes (whose create makes the volume as Docker does), both state
// backends' real code.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { ReplacementResult } from "../../lib/runtime/replacement/result.ts";
import { volumeName } from "../../lib/runtime/labels.ts";
import { BACKENDS, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/** The replacement stopped at old_removed on the missing volume, naming the way out. */
function assertStopped(r: ReplacementResult, message: RegExp): void {
  assert.equal(r.committed, false, JSON.stringify(r));
  assert.equal(r.outcome, "blocked");
  assert.equal(r.last_boundary, "old_removed");
  assert.deepEqual(r.blockers.map((b) => b.code), ["BLOCKED_VOLUME_MISSING"]);
  const [b] = r.blockers;
  assert.equal(b.model, "eligible_orders");
  assert.match(b.message, message);
  assert.ok(
    b.message.includes(`'sluice state abandon --operation-id ${r.operation_id} --reason TEXT'`),
    b.message,
  );
}

/** Nothing of the candidate and no volume of that name is left in the world. */
function assertNothingLeft(rc: ReplacementCase, operationId: string, volume: string): void {
  const w = rc.world();
  assert.equal(w.docker.volumes[volume], undefined, "no volume of that name");
  const name = rc.candidateName(operationId);
  assert.deepEqual(Object.values(w.docker.containers).filter((c) => c.name === name), []);
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a state volume removed right before the candidate's create: the create is undone, no candidate and no new volume, the way out named`, async () => {
    await using rc = await replacementCase(backend);
    const volume = volumeName(rc.cw.applicationId);
    const docker = rc.options().docker!;
    let raced = 0;
    // the outside world removes the volume in the instant before the create reaches the daemon
    const racing: DockerPort = {
      ...docker,
      createContainer: (spec) => {
        if (spec.volume === volume && raced++ === 0) rc.cw.world.control.removeVolume(volume);
        return docker.createContainer(spec);
      },
    };
    const r = await executeReviewed(rc.options({ docker: racing }));
    assert.equal(raced, 1, "the candidate's create was reached once");
    assertStopped(
      r,
      /vanished during the create .* the container was removed and that volume removed/,
    );
    // the create did happen, on a volume Docker made, and was undone
    const ops = ["signalTerm", "removeContainer", "createContainer", "discardCreated"];
    assert.deepEqual(rc.mutations().map((m) => m.op), ops);
    assertNothingLeft(rc, r.operation_id, volume);
    // a resume finds the volume missing before any step, and changes nothing
    const again = await resumeReviewed(rc.operation(r.operation_id));
    assert.equal(again.outcome, "blocked", JSON.stringify(again));
    assert.ok(again.blockers.some((b) => b.code === "BLOCKED_VOLUME_MISSING"));
    assert.deepEqual(rc.mutations().map((m) => m.op), ops);
    assertNothingLeft(rc, r.operation_id, volume);
  });

  Deno.test(`[${backend}] a state volume removed after the last observation is refused before the candidate's create: nothing is created`, async () => {
    await using rc = await replacementCase(backend);
    const volume = volumeName(rc.cw.applicationId);
    const docker = rc.options().docker!;
    // the driver writes the candidate's mounted plan file, then inspects the image it creates
    // from (after the observation that authorized the create): the volume goes in between
    const plans = `${rc.cw.project.dir}/.sluice/runtime/plans`;
    const count = () => {
      try {
        return [...Deno.readDirSync(plans)].length;
      } catch {
        return 0;
      }
    };
    const before = count();
    let removed = 0;
    const late: DockerPort = {
      ...docker,
      inspectImage: (id) => {
        if (count() > before && removed++ === 0) rc.cw.world.control.removeVolume(volume);
        return docker.inspectImage(id);
      },
    };
    const r = await executeReviewed(rc.options({ docker: late }));
    assert.equal(removed, 1, "the volume was removed once the candidate's plan file was written");
    assertStopped(r, /does not exist; .* was not created/);
    assert.deepEqual(rc.mutations().map((m) => m.op), ["signalTerm", "removeContainer"]);
    assertNothingLeft(rc, r.operation_id, volume);
  });
}
