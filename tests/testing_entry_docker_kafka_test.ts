// test-needs: env
// Needs: Docker and the broker image (scripts/bootstrap.sh), PostgreSQL's binaries.
// Environments as disposable builders for a user's CI (issue 30 item 8): a script in a scratch
// directory outside the checkout, with no configuration and no --config, imports testing.ts by
// URL, starts a broker (no Connect worker) and a private PostgreSQL with `await using`, uses both
// (a topic created and described through the SDK's own Kafka port; a query), and leaves
// nothing behind once they are disposed: no container or network of its run, the server stopped.
import assert from "node:assert/strict";
import { join } from "node:path";
import { deno, scratchDir } from "./scratch.ts";
import { RUN_LABEL } from "../harness/env.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ROOT = new URL("..", import.meta.url).pathname;

const SCRIPT = (root: string) =>
  `import { startEnvironment, startPostgres } from "file://${root}testing.ts";
import { platformaticKafka } from "file://${root}lib/providers/kafka/platformatic.ts";
import pg from "npm:pg@8.23.1";

let runId = "", pgUrl = "", topicId = "";
{
  await using env = await startEnvironment({ connect: false });
  await using server = await startPostgres();
  runId = env.runId;
  pgUrl = server.url;
  const kafka = platformaticKafka(env.bootstrapHost);
  await kafka.createTopic("ci_smoke", 1);
  const { clusterId, topics } = await kafka.describe(["ci_smoke"]);
  await kafka.close();
  if (clusterId !== env.clusterId) throw new Error("another cluster");
  topicId = topics.get("ci_smoke")!.id;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const { rows } = await client.query("SELECT 41 + 1 AS answer");
  await client.end();
  if (rows[0].answer !== 42) throw new Error("postgres did not answer");
}
console.log(JSON.stringify({ runId, pgUrl, topicId }));
`;

async function dockerLines(args: string[]): Promise<string[]> {
  const out = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.trim() !== "");
}

Deno.test(
  "testing.ts imported by URL from a scratch directory: a broker and a PostgreSQL, used, then disposed without a trace",
  opts,
  async () => {
    const work = await scratchDir();
    try {
      await Deno.writeTextFile(join(work, "ci.ts"), SCRIPT(ROOT));
      const checked = await deno(["check", "ci.ts"], work);
      assert.equal(checked.code, 0, checked.all);
      const ran = await deno(["run", "-A", "ci.ts"], work);
      assert.equal(ran.code, 0, ran.all);
      const { runId, pgUrl, topicId } = JSON.parse(ran.stdout.trim().split("\n").at(-1)!);
      assert.match(runId, /^sluice-[0-9a-f]{8}$/);
      assert.match(topicId, /^[A-Za-z0-9_-]{22}$/, "the topic was created on the started broker");
      // disposed: nothing labelled with its run is left, and the server no longer answers
      const label = `label=${RUN_LABEL}=${runId}`;
      assert.deepEqual(await dockerLines(["ps", "-a", "-q", "--filter", label]), []);
      assert.deepEqual(await dockerLines(["network", "ls", "-q", "--filter", label]), []);
      const port = Number(new URL(pgUrl).port);
      const refused = await Deno.connect({ hostname: "127.0.0.1", port }).then(
        (c) => (c.close(), false),
        () => true,
      );
      assert.ok(refused, `PostgreSQL on ${port} still answers after dispose`);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  },
);
