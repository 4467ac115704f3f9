import { deepStrictEqual } from "node:assert/strict";
import { loadProject } from "./load.ts";
import { starterFiles } from "./starter.ts";
import { projectTopics } from "./topics.ts";
import { tempStarter } from "./_test_project.ts";

const MANIFEST = starterFiles()[0].content;

Deno.test("projectTopics lists sources, outputs and dead-letter topics with their roles", async () => {
  deepStrictEqual(projectTopics(await loadProject(await tempStarter())), [
    { topic: "raw_orders", role: "source", partitions: 3 },
    { topic: "eligible_orders", role: "output", partitions: 3 },
  ]);
  const output = "    output:\n      topic: eligible_orders\n";
  const dl = await loadProject(
    await tempStarter({
      "sluice.yaml": MANIFEST.replace(
        output,
        `${output}    on_invalid: dead_letter\n    dead_letter: { topic: dlq, partitions: 2 }\n`,
      ),
    }),
  );
  deepStrictEqual(projectTopics(dl).map((t) => [t.topic, t.role, t.partitions]), [
    ["raw_orders", "source", 3],
    ["eligible_orders", "output", 3],
    ["dlq", "dead_letter", 2],
  ]);
});
