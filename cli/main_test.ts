import assert from "node:assert/strict";
import { SLUICE_VERSION } from "../lib/version.ts";
import { tempStarter } from "../lib/project/_test_project.ts";
import type { DockerPort } from "../lib/providers/docker/port.ts";
import type { KafkaPort } from "../lib/providers/kafka/port.ts";
import { runInProcess } from "../testing/in_process_cli.ts";

const launcher = new URL("../bin/sluice", import.meta.url).pathname;

async function sluice(...args: string[]) {
  const out = await new Deno.Command(launcher, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the launcher prints the version and exits 0", async () => {
  const r = await sluice("--version");
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), SLUICE_VERSION);
});

Deno.test("--help lists the -o option and exits 0", async () => {
  const r = await sluice("--help");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /-o, --output <format>/);
});

Deno.test("an unknown command is a usage error with exit status 2", async () => {
  const r = await sluice("no-such-command");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no-such-command|unknown command|too many arguments/);
});

Deno.test("an unknown command with --help or -h is still a usage error (exit 2), at any level", async () => {
  for (
    const args of [
      ["nonexistent", "--help"],
      ["--help", "nonexistent"],
      ["-o", "json", "nonexistent", "-h"],
      ["state", "nonexistent", "--help"],
    ]
  ) {
    const r = await sluice(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /error: unknown command 'nonexistent'/, args.join(" "));
  }
  // help of a known command, a group or a command's argument is still help
  for (const args of [["state", "--help"], ["state", "show", "-h"], ["init", "--help", "dir"]]) {
    const r = await sluice(...args);
    assert.equal(r.code, 0, args.join(" "));
    assert.match(r.stdout, /^Usage: sluice /, args.join(" "));
  }
});

Deno.test("-o accepts only text or json", async () => {
  const r = await sluice("-o", "yaml", "--version");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Allowed choices are text, json/);
});

Deno.test("a failure under -o json is one envelope naming the command, with a stable code", async () => {
  const r = await sluice("-o", "json", "validate", "--project", "/nonexistent-sluice-project");
  assert.equal(r.code, 3);
  const env = JSON.parse(r.stdout);
  assert.equal(env.ok, false);
  assert.equal(env.command, "validate");
  assert.equal(env.data, null);
  assert.equal(env.errors[0].code, "PROJECT_NOT_FOUND");
});

Deno.test("a fault switch without the test-only permission is refused before anything runs", async () => {
  const run = async (env: Record<string, string>) => {
    const out = await new Deno.Command(launcher, {
      args: ["-o", "json", "validate", "--project", "/nonexistent-sluice-project"],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, env: JSON.parse(new TextDecoder().decode(out.stdout)) };
  };
  const refused = await run({ SLUICE_FAULT_POINT: "docker.remove_old:after" });
  assert.equal(refused.code, 2);
  assert.equal(refused.env.errors[0].code, "USAGE_FAULT_SWITCH_NOT_ALLOWED");
  const unknown = await run({
    SLUICE_FAULT_POINT: "docker.remove_everything:after",
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
  });
  assert.equal(unknown.code, 2);
  assert.equal(unknown.env.errors[0].code, "USAGE_FAULT_POINT");
  // a known site with the permission: the command itself runs (and fails on its own terms)
  const allowed = await run({
    SLUICE_FAULT_POINT: "docker.remove_old:after",
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
  });
  assert.equal(allowed.code, 3);
  assert.equal(allowed.env.errors[0].code, "PROJECT_NOT_FOUND");
});

Deno.test("runCli passes the injected ports to the SDK: observe reads the given Docker and Kafka", async () => {
  const dir = await tempStarter();
  const calls: string[] = [];
  // stubs with only the reads `observe` makes (any other call would fail the test)
  const docker = {
    daemonId: () => (calls.push("daemonId"), Promise.resolve("INJECTED-DAEMON")),
    listContainersLabelled: () => Promise.resolve([]),
    listVolumes: () => Promise.resolve(new Map()),
    inspectImage: () => Promise.resolve(null),
    networkId: () => Promise.resolve(null),
  } as Partial<DockerPort> as DockerPort;
  const kafka = {
    describe:
      () => (calls.push("describe"),
        Promise.resolve({ clusterId: "INJECTED-CLUSTER", topics: new Map() })),
    describeGroups: (ids: string[]) =>
      Promise.resolve(
        new Map(ids.map((groupId) => [groupId, { groupId, state: "Dead", members: [] }])),
      ),
    committedOffsetsOf: (ids: string[]) => Promise.resolve(new Map(ids.map((g) => [g, new Map()]))),
    offsetRangesOf: () => Promise.resolve(new Map()),
    close: () => Promise.resolve(),
  } as Partial<KafkaPort> as KafkaPort;
  try {
    const r = await runInProcess(["-o", "json", "observe", "--project", dir], { docker, kafka });
    assert.equal(r.code, 0, r.stdout);
    const data = JSON.parse(r.stdout).data;
    assert.equal(data.daemonId, "INJECTED-DAEMON");
    assert.equal(data.clusterId, "INJECTED-CLUSTER");
    // both were called (concurrently: their order is not a property)
    assert.deepEqual(calls.sort(), ["daemonId", "describe"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runCli passes the injected clock: an offline plan is stamped with its time", async () => {
  const dir = await tempStarter();
  const t = Date.parse("2031-02-03T04:05:06.000Z");
  try {
    const r = await runInProcess(["-o", "json", "plan", "--project", dir, "--offline"], {
      clock: { now: () => t },
    });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(JSON.parse(r.stdout).data.plan.created_at, "2031-02-03T04:05:06.000Z");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
