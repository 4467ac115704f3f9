import assert from "node:assert/strict";
import type { RunnerObservation } from "../validation/observation.ts";
import { unownedPartitions } from "./status.ts";

/** An observation with only what the partition reading looks at. */
function observed(
  input: { name: string; partitions: number } | null,
  assignments: Array<Array<{ topic: string; partitions: number[] }>>,
): RunnerObservation {
  return {
    kafka: {
      input: input && { ...input, id: "AAAAAAAAAAAAAAAAAAAAAA" },
      group: {
        state: assignments.length > 0 ? "Stable" : "Empty",
        members: assignments.map((assignment, i) => ({
          memberId: `m${i}`,
          clientId: `c${i}`,
          clientHost: "/10.0.0.2",
          groupInstanceId: null,
          assignment,
        })),
      },
    },
  } as unknown as RunnerObservation;
}

Deno.test("unowned input partitions: those no member's assignment holds, other topics aside", () => {
  const input = { name: "raw_orders", partitions: 3 };
  assert.deepEqual(
    unownedPartitions(observed(input, [[{ topic: "raw_orders", partitions: [0, 1, 2] }]])),
    [],
  );
  assert.deepEqual(
    unownedPartitions(observed(input, [
      [{ topic: "raw_orders", partitions: [0] }],
      [{ topic: "other", partitions: [1, 2] }],
    ])),
    [1, 2],
  );
  // a member that joined and holds nothing yet (a rebalance): every partition is unowned
  assert.deepEqual(unownedPartitions(observed(input, [[]])), [0, 1, 2]);
});

Deno.test("unowned input partitions: nothing to say without members or without the input topic", () => {
  assert.equal(unownedPartitions(observed({ name: "raw_orders", partitions: 3 }, [])), null);
  assert.equal(
    unownedPartitions(observed(null, [[{ topic: "raw_orders", partitions: [0] }]])),
    null,
  );
});
