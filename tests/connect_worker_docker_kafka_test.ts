// test-needs: env
// Needs: Docker and the broker and Connect images (scripts/bootstrap.sh). Starts its own fresh
// environment (network, broker, Connect worker) and removes it, so it proves that the harness
// brings the worker up, not that some earlier run left one behind.
import assert from "node:assert/strict";
import { RUN_LABEL, startEnv } from "../harness/env.ts";
import { countLabelled, docker } from "../harness/docker.ts";
import { CONNECT_IMAGE } from "../harness/images.ts";
import { FILE_STREAM_CONNECTORS } from "../harness/connect.ts";
import { describeCluster } from "../harness/kafka.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: res.status, body: await res.json() };
}

Deno.test(
  "a fresh environment starts a Connect worker beside the broker, and tear-down removes it",
  opts,
  async () => {
    const env = await startEnv();
    try {
      const connect = env.connect;
      assert.ok(connect, "startEnv() starts a Connect worker by default");
      console.log(`Connect worker ready ${connect.readyMs} ms after create`);

      // REST from the host: worker info names the broker's cluster; the plugins are installed
      const root = await getJson(`${connect.restHost}/`);
      assert.equal(root.status, 200);
      const info = root.body as { version: string; kafka_cluster_id: string };
      assert.equal(info.version, "4.1.2");
      assert.equal(info.kafka_cluster_id, env.clusterId);
      const plugins = await getJson(`${connect.restHost}/connector-plugins`);
      const classes = (plugins.body as Array<{ class: string; type: string }>).map((p) => p.class);
      for (const c of FILE_STREAM_CONNECTORS) assert.ok(classes.includes(c), `${c} in ${classes}`);
      assert.deepEqual((await getJson(`${connect.restHost}/connectors`)).body, []);

      // the container: our image, our labels, on the network under its alias, as the host user
      const c = await docker().getContainer(connect.containerId).inspect();
      assert.equal(c.Config.Labels[RUN_LABEL], env.runId);
      assert.equal(c.Config.Image, CONNECT_IMAGE);
      assert.deepEqual(c.NetworkSettings.Networks[env.network]?.Aliases?.includes("connect"), true);
      assert.equal(connect.restInternal, "http://connect:8083");
      assert.equal(c.Config.User, `${Deno.uid()}:${Deno.gid()}`);
      const bind = c.Mounts.find((m) => m.Destination === connect.dataDirContainer);
      assert.equal(bind?.Source, connect.dataDirHost);

      // its internal topics exist on the broker, one partition each
      const topics = [connect.topics.config, connect.topics.offset, connect.topics.status];
      const described = await describeCluster(env.bootstrapHost, topics);
      assert.deepEqual(Object.keys(described.topicIds).sort(), [...topics].sort());
    } finally {
      const removed = await env.teardown();
      assert.equal(removed.containers, 2, "broker and worker");
      assert.deepEqual(removed.strays, []);
    }
    assert.deepEqual(await countLabelled(RUN_LABEL, env.runId), {
      containers: 0,
      volumes: 0,
      networks: 0,
    });
    await assert.rejects(Deno.stat(env.connect!.dataDirHost), Deno.errors.NotFound);
  },
);

Deno.test("connect: false starts no worker", opts, async () => {
  const env = await startEnv({ connect: false });
  try {
    assert.equal(env.connect, null);
  } finally {
    const removed = await env.teardown();
    assert.equal(removed.containers, 1, "the broker only");
  }
});
