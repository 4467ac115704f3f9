// A handle's ports against a changed project (unit tests on the fake world): a port the handle
// made is made again when the settings it was made from change (the manifest's broker edited
// between two calls), a given one is refused with USAGE_STALE_PORTS before anything runs, and
// configuration in code (openProject({ settings })) is what a plan is bound to.
import assert from "node:assert/strict";
import { initProject } from "../project/starter.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { StateStore } from "../state/store.ts";
import { openStateStore } from "../state/open.ts";
import { projectStoreConfig } from "../runtime/state_store.ts";
import { projectStatus } from "../runtime/status.ts";
import { writePlanFile } from "../plan/plan_file.ts";
import { SluiceError } from "../errors.ts";
import { createFakeWorld, type FakeWorld } from "../../testing/fakes/fake_world.ts";
import { HandlePorts, type PortFactories, portsFingerprint } from "./ports.ts";
import { openProject } from "./project.ts";
import { loadProject } from "../project/load.ts";

/** The starter pointed at the fake world, its host broker address `broker`. */
async function fakeProject(world: FakeWorld, dir: string, broker: string): Promise<void> {
  await initProject(dir);
  const manifest = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest))
      .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${broker}`)
      .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${world.env.bootstrapInternal}`)
      .replace(/^network: .*$/m, `network: ${world.env.network}`)
      .replace(/^image: .*$/m, `image: ${world.env.runnerImage}`),
  );
}

async function setBroker(dir: string, broker: string): Promise<void> {
  const manifest = `${dir}/sluice.yaml`;
  const text = await Deno.readTextFile(manifest);
  await Deno.writeTextFile(
    manifest,
    text.replace(/bootstrap_host: .*$/m, `bootstrap_host: ${broker}`),
  );
}

/** The fake world's ports, made as the real factories make them: from the manifest. */
function worldFactories(world: FakeWorld, made: { kafka: string[]; closed: string[] }) {
  const factories: PortFactories = {
    docker: () => Promise.resolve(world.docker),
    kafka: (manifest) => {
      const address = manifest.kafka.bootstrapHost;
      made.kafka.push(address);
      const port = Object.create(world.kafka(address)) as KafkaPort;
      port.close = () => (made.closed.push(address), Promise.resolve());
      return Promise.resolve(port);
    },
    store: (project) =>
      openStateStore(projectStoreConfig(project), { clock: () => new Date(world.clock.now()) }),
  };
  return factories;
}

Deno.test("a port the handle made is made again when the manifest's broker changes between two calls", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ports-" });
  const world = createFakeWorld({ seed: "ports-rebuild" });
  const made = { kafka: [] as string[], closed: [] as string[] };
  // first pointed at a broker that is not there, as after a move of the cluster
  await fakeProject(world, dir, "old-broker:9094");
  const ports = new HandlePorts(
    { dir, environment: null, given: {}, clock: world.clock },
    worldFactories(world, made),
  );
  try {
    const first = await ports.current();
    const status = () => projectStatus({ dir, clock: world.clock, ...first });
    await assert.rejects(status, /old-broker:9094/);
    assert.deepEqual(made.kafka, ["old-broker:9094"]);

    // unchanged settings: the same clients
    const again = await ports.current();
    assert.equal(again.kafka, first.kafka);
    assert.equal(again.store, first.store);

    await setBroker(dir, world.env.bootstrapHost);
    const second = await ports.current();
    assert.deepEqual(made.kafka, ["old-broker:9094", world.env.bootstrapHost]);
    assert.deepEqual(made.closed, ["old-broker:9094"], "the stale client is closed");
    assert.notEqual(second.kafka, first.kafka);
    assert.equal(second.store, first.store, "only the port whose settings changed is remade");
    assert.equal(second.docker, first.docker);
    const ok = await projectStatus({ dir, clock: world.clock, ...second });
    assert.equal(ok.models[0].state, "absent");
  } finally {
    await ports.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(made.closed, ["old-broker:9094", world.env.bootstrapHost]);
});

Deno.test("the fingerprint covers what each port is made from, never showing a secret", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ports-" });
  const world = createFakeWorld({ seed: "ports-fingerprint" });
  await fakeProject(world, dir, world.env.bootstrapHost);
  try {
    const security = {
      protocol: "SASL_PLAINTEXT",
      admin: { sasl_mechanism: "PLAIN", username: "ci", password_env: "CI_PW" },
      runner: { sasl_mechanism: "PLAIN", username: "r", password_env: "R_PW" },
    };
    const project = await loadProject(dir, { settings: { kafka: { security } } });
    const env = (pw: string) => (name: string) => name === "CI_PW" ? pw : undefined;
    const a = portsFingerprint(project, env("first-password"));
    const b = portsFingerprint(project, env("second-password"));
    assert.notEqual(a.kafka["kafka.security.admin"], b.kafka["kafka.security.admin"]);
    assert.deepEqual(a.store, b.store);
    assert.equal(JSON.stringify(a).includes("first-password"), false);
    // the runner's principal is not the handle's client: its change remakes nothing
    const other = await loadProject(dir, {
      settings: {
        kafka: { security: { ...security, runner: { ...security.runner, username: "x" } } },
      },
    });
    assert.deepEqual(portsFingerprint(other, env("first-password")).kafka, a.kafka);
    const docker = await loadProject(dir, { settings: { docker: { endpoint: "tcp://d:2375" } } });
    assert.deepEqual(portsFingerprint(docker).docker, {
      "settings.docker.endpoint": "tcp://d:2375",
    });
    // settings.docker.tls: its variables' values (hashed, never shown) remake the Docker port
    const tls = { ca_file_env: "D_CA", cert_file_env: "D_CERT", key_file_env: "D_KEY" };
    const secured = await loadProject(dir, {
      settings: { docker: { endpoint: "tcp://d:2376", tls } },
    });
    const paths = (ca: string) => (name: string) =>
      ({ D_CA: ca, D_CERT: "/c/cert.pem", D_KEY: "/c/key.pem" })[name];
    const one = portsFingerprint(secured, paths("/c/ca-one.pem")).docker;
    const two = portsFingerprint(secured, paths("/c/ca-two.pem")).docker;
    assert.deepEqual(Object.keys(one).sort(), ["settings.docker.endpoint", "settings.docker.tls"]);
    assert.notEqual(one["settings.docker.tls"], two["settings.docker.tls"]);
    assert.equal(JSON.stringify(one).includes("ca-one"), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a given port is refused with USAGE_STALE_PORTS once its settings change; nothing runs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ports-" });
  const world = createFakeWorld({ seed: "ports-given" });
  await fakeProject(world, dir, world.env.bootstrapHost);
  const store: StateStore = openStateStore(
    projectStoreConfig(await loadProject(dir)),
    { clock: () => new Date(world.clock.now()) },
  );
  try {
    await using project = await openProject({
      dir,
      docker: world.docker,
      kafka: world.kafka(world.env.bootstrapHost),
      store,
      clock: world.clock,
      uuids: world.ids,
    });
    await project.initState();
    assert.equal((await project.status()).models[0].state, "absent");
    // a setting no port is made from: no refusal
    const manifest = `${dir}/sluice.yaml`;
    await Deno.writeTextFile(
      manifest,
      (await Deno.readTextFile(manifest)).replace(
        /^initial_offsets: .*$/m,
        "initial_offsets: latest",
      ),
    );
    await project.status();

    await setBroker(dir, "new-broker:9094");
    const before = (await store.load()).history.events.length;
    await assert.rejects(
      () => project.apply(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "USAGE_STALE_PORTS" &&
        (e.evidence?.changed as string[]).join() === "kafka.bootstrap_host" &&
        e.evidence?.port === "kafka" && /Kafka port given/.test(e.message),
    );
    assert.equal((await store.load()).history.events.length, before, "nothing was done");
    // put back: the given port is right again
    await setBroker(dir, world.env.bootstrapHost);
    assert.equal((await project.status()).models[0].state, "absent");
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("configuration in code: a plan is bound to the handle's settings override", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ports-" });
  const world = createFakeWorld({ seed: "ports-settings" });
  // the manifest names another image; the override gives the one the world has
  await fakeProject(world, dir, world.env.bootstrapHost);
  const manifest = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest)).replace(/^image: .*$/m, `image: sha256:${"c".repeat(64)}`),
  );
  const settings = { image: world.env.runnerImage };
  const handle = (s?: typeof settings) =>
    openProject({
      dir,
      docker: world.docker,
      kafka: world.kafka(world.env.bootstrapHost),
      clock: world.clock,
      uuids: world.ids,
      settings: s,
    });
  try {
    {
      await using project = await handle(settings);
      const compiled = await project.compile({ out: `${dir}/out` });
      const artifact = JSON.parse(await Deno.readTextFile(compiled.files[0].path));
      assert.equal(artifact.image, world.env.runnerImage, "compiled as if sluice.yaml said it");
      const planned = await project.plan();
      assert.deepEqual(planned.plan.blockers, []);
      await writePlanFile(`${dir}/create.plan.json`, planned.plan);
    }
    for (const other of [undefined, { image: `sha256:${"d".repeat(64)}` }]) {
      await using project = await handle(other);
      await assert.rejects(
        () => project.apply({ plan: `${dir}/create.plan.json` }),
        (e: unknown) => e instanceof SluiceError && e.code === "PLAN_STALE_SOURCE",
        JSON.stringify(other),
      );
    }
    await using project = await handle(settings);
    const outcome = await project.apply({ plan: `${dir}/create.plan.json` });
    assert.equal(outcome.kind, "change");
    const status = await project.status();
    assert.equal(status.models[0].healthy, true, JSON.stringify(status.models[0]));
    // an invalid override is refused with the manifest's code, named by its key path
    await using bad = await openProject({ dir, settings: { network: "no spaces allowed" } });
    await assert.rejects(
      () => bad.validate(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "MANIFEST_INVALID_VALUE" &&
        e.message.startsWith("settings.network: "),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a handle's own store is made again from the manifest's new state: between two calls", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ports-" });
  const world = createFakeWorld({ seed: "ports-store" });
  await fakeProject(world, dir, world.env.bootstrapHost);
  try {
    // Docker and Kafka given, the store the handle's own (the real local backend)
    await using project = await openProject({
      dir,
      docker: world.docker,
      kafka: world.kafka(world.env.bootstrapHost),
      clock: world.clock,
      uuids: world.ids,
    });
    await project.initState();
    assert.equal((await project.state()).ownership, null);
    const manifest = `${dir}/sluice.yaml`;
    await Deno.writeTextFile(
      manifest,
      (await Deno.readTextFile(manifest)).replace("dir: .sluice/state", "dir: .sluice/moved"),
    );
    // the old store is initialized; the new one is not, and that is what the handle now reads
    await assert.rejects(
      () => project.state(),
      (e: unknown) => e instanceof SluiceError && e.code === "STATE_NOT_INITIALIZED",
    );
    await project.initState();
    assert.ok((await Deno.stat(`${dir}/.sluice/moved`)).isDirectory);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
