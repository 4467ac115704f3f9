import assert from "node:assert/strict";
import {
  candidateContainerName,
  initialContainerName,
  instanceContainerName,
  instanceLabels,
  instanceOfLabels,
  instanceVolumeName,
  LABEL,
  volumeName,
} from "./labels.ts";

const app = "sluice-orders-prod-eligible_orders";

Deno.test("instance 0's names and labels are the single runner's, byte for byte", () => {
  assert.equal(volumeName(app), `${app}-state`);
  assert.equal(instanceVolumeName(app, 0), volumeName(app));
  assert.equal(initialContainerName(app), app);
  assert.equal(instanceContainerName(app, 0), app);
  assert.equal(candidateContainerName(app, "op", 3), `${app}.op-op.a3`);
  assert.equal(candidateContainerName(app, "op", 3, 0), candidateContainerName(app, "op", 3));
  assert.deepEqual(instanceLabels(0), {});
});

Deno.test("every instance of a set has its own container, candidate and volume names", () => {
  const names = [0, 1, 2, 10].flatMap((i) => [
    instanceContainerName(app, i),
    candidateContainerName(app, "op", 3, i),
    candidateContainerName(app, "op", 4, i),
  ]);
  assert.equal(new Set(names).size, names.length);
  assert.equal(instanceContainerName(app, 2), `${app}.2`);
  assert.equal(candidateContainerName(app, "op", 3, 2), `${app}.2.op-op.a3`);
  const volumes = [0, 1, 2, 10].map((i) => instanceVolumeName(app, i));
  assert.deepEqual(volumes, [
    `${app}-state`,
    `${app}-state-1`,
    `${app}-state-2`,
    `${app}-state-10`,
  ]);
  for (const bad of [-1, 1.5, Number.NaN]) {
    assert.throws(() => instanceContainerName(app, bad), RangeError);
    assert.throws(() => instanceVolumeName(app, bad), RangeError);
    assert.throws(() => instanceLabels(bad), RangeError);
  }
});

Deno.test("a single runner's names take one argument: mapping application IDs names no instance", () => {
  // Array.prototype.map passes each element's index too: a name with an optional instance would
  // have named the second application's volume "-state-1"
  assert.deepEqual(["a", "b"].map(volumeName), ["a-state", "b-state"]);
  assert.deepEqual(["a", "b"].map(initialContainerName), ["a", "b"]);
});

Deno.test("the instance label reads back as written; anything sluice never writes reads as null", () => {
  for (const i of [0, 1, 7, 31]) assert.equal(instanceOfLabels(instanceLabels(i)), i);
  for (const bad of ["0", "01", "-1", "x", "", "1.0", " 1", "1234567890"]) {
    assert.equal(instanceOfLabels({ [LABEL.instance]: bad }), null, bad);
  }
});
