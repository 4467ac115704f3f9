/**
 * The quickstart: what a new user runs first (`./run demo`, or `deno task demo`).
 *
 *  1. bring up a real environment: a Docker network and a single-node KRaft broker;
 *  2. `sluice init` the orders starter in a temporary directory;
 *  3. build (or find) the runner image with `runner/build.sh` and point sluice.yaml at it
 *     and at the environment;
 *  4. `sluice plan --out plan.json`, then `sluice apply --plan plan.json`;
 *  5. produce the starter's sample records and print the exact output records, checked
 *     against the model's own predicate and projection;
 *  6. show that a repeated `sluice plan` is a no-op;
 *  7. change the filter (amount >= 100 → amount >= 200), committed to Git: `sluice diff --base
 *     HEAD~1` shows the change from Git's objects alone; `sluice plan --preview --out` reviews it
 *     — the old and new WHERE, `fraud_app` as the affected downstream application, and a preview
 *     of what the new filter would drop among the sample records — and seals it as format 6;
 *     then `sluice apply --plan`; the same application ID, state volume instance and committed
 *     offsets carry over, records before the change keep the old predicate, records after it get
 *     the new one, and a repeated plan is a no-op again.
 *
 * `--secure` (`./run demo --secure`): the same journey against the broker's SASL_SSL listener
 * with the StandardAuthorizer (`harness/secure_kafka.ts`): sluice as its admin principal
 * (`sluice-admin`), the runner as its own (`orders-runner`) with exactly the ACLs its job needs,
 * sluice.yaml's `kafka.security` naming only environment variables (the passwords and the CA
 * file stay in this process's environment). The sample records are produced and read on the
 * plaintext listener, as an existing producer and consumer would.
 *
 * It exits non-zero if any step does not give exactly the expected result, and removes
 * everything it created (the runner container and volume, the broker, the network).
 * @module
 */
import { removeLabelled } from "../harness/docker.ts";
import { startEnv } from "../harness/env.ts";
import { produce, waitForRecords } from "../harness/kafka.ts";
import { grantRunnerAcls, scramSecurityYaml, scramVariables } from "../harness/secure_kafka.ts";
import { decodeRecord } from "../lib/expr/decode.ts";
import { evaluate } from "../lib/expr/evaluate.ts";
import { compile } from "../lib/project/compile.ts";
import { loadProject } from "../lib/project/load.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SLUICE = `${ROOT}bin/sluice`;

function say(text: string): void {
  console.log(`\n[quickstart] ${text}`);
}

function fail(text: string): never {
  throw new Error(text);
}

/** Run a command, printing its output as it comes; fail unless it exits 0. */
async function run(cmd: string, args: string[]): Promise<void> {
  console.log(`$ ${[cmd.replace(ROOT, ""), ...args].join(" ")}`);
  const { code } = await new Deno.Command(cmd, { args, stdout: "inherit", stderr: "inherit" })
    .output();
  if (code !== 0) fail(`${cmd.replace(ROOT, "")} ${args[0]} exited with ${code}`);
}

/** Git in the demo's directory, with a fixed identity and no global configuration. */
async function git(dir: string, ...args: string[]): Promise<void> {
  const { code } = await new Deno.Command("git", {
    args,
    cwd: dir,
    env: {
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "sluice quickstart",
      GIT_AUTHOR_EMAIL: "quickstart@sluice.invalid",
      GIT_COMMITTER_NAME: "sluice quickstart",
      GIT_COMMITTER_EMAIL: "quickstart@sluice.invalid",
    },
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (code !== 0) fail(`git ${args.join(" ")} exited with ${code}`);
}

/** Run a command and return its stdout (stderr is shown); fail unless it exits 0. */
async function capture(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "inherit" }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) fail(`${cmd.replace(ROOT, "")} exited with ${out.code}:\n${stdout}`);
  return stdout;
}

type Sample = { key: string; value: unknown };
type Out = { key: string | null; value: string | null };

async function compiledArtifact(dir: string) {
  return compile(await loadProject(dir)).artifacts[0].artifact;
}

/**
 * What the model must give: each record decoded against the schema, kept when the predicate
 * is TRUE, projected to the SELECT columns (the runner's exact output form).
 */
function expectedOutput(
  samples: Sample[],
  artifact: Awaited<ReturnType<typeof compiledArtifact>>,
): Out[] {
  return samples.flatMap((s) => {
    const decoded = decodeRecord(JSON.stringify(s.value), artifact.schema);
    if (!decoded.ok) fail(`sample ${s.key} does not decode: ${decoded.message}`);
    if (artifact.predicate !== null && evaluate(artifact.predicate, decoded.values) !== true) {
      return [];
    }
    const value = "{" + artifact.projection.map((c) => {
      const v = decoded.values[c.source];
      return `${JSON.stringify(c.name)}:${typeof v === "bigint" ? v : JSON.stringify(v)}`;
    }).join(",") + "}";
    return [{ key: s.key, value }];
  });
}

/** Wait for the output topic to hold exactly `expected` (by key), print it, fail otherwise. */
async function checkOutput(bootstrap: string, expected: Out[]): Promise<void> {
  const got = (await waitForRecords(bootstrap, "eligible_orders", expected.length, {
    partitions: [0, 1, 2],
  })).map((r) => ({ key: r.key, value: r.value }));
  const byKey = (a: Out, b: Out) => (a.key ?? "").localeCompare(b.key ?? "");
  got.sort(byKey);
  for (const r of got) console.log(`${r.key}  ${r.value}`);
  if (JSON.stringify(got) !== JSON.stringify([...expected].sort(byKey))) {
    fail(`the output differs from the expected records:\n${JSON.stringify(expected, null, 2)}`);
  }
}

/** Identity and progress as `sluice observe` reports them. */
async function observed(dir: string) {
  const o = JSON.parse(await capture(SLUICE, ["-o", "json", "observe", "--project", dir])).data;
  const r = o.runners[0];
  return {
    applicationId: r.applicationId as string,
    volumeInstance: r.volume.instanceLabel as string,
    committed: r.kafka.committed as Record<string, string>,
  };
}

const secured = Deno.args.includes("--secure");
const unknown = Deno.args.filter((a) => a !== "--secure");
if (unknown.length > 0) fail(`unknown argument ${unknown[0]} (usage: ./run demo [--secure])`);

/** sluice.yaml's kafka.security for `--secure`: variables' names only, never a secret. */
const SECURITY = scramSecurityYaml();

say(
  `starting a Docker network and a Kafka broker (KRaft) for this demo${
    secured ? ", with a SASL_SSL listener and ACLs" : ""
  }`,
);
const env = await startEnv(
  secured
    ? {
      connect: false,
      secure: { users: [{ name: "sluice-admin", superUser: true }, { name: "orders-runner" }] },
    }
    : {},
);
// where sluice and the runner reach the broker: the SASL_SSL listener under --secure
const sluiceBootstrap = env.secure?.bootstrapHost ?? env.bootstrapHost;
const runnerBootstrap = env.secure?.bootstrapInternal ?? env.bootstrapInternal;
console.log(
  `broker ${sluiceBootstrap} (from this machine), ${runnerBootstrap} (network ${env.network})`,
);
if (env.secure) {
  // the secrets reach sluice only through its environment (the children inherit it)
  for (const [name, value] of Object.entries(scramVariables(env.secure))) {
    Deno.env.set(name, value);
  }
}
const dir = await Deno.makeTempDir({ prefix: "sluice-quickstart-" });
// Docker names containers and volumes after the application ID, daemon-wide: a per-run
// project name keeps this demo clear of anything else on the machine.
const project = `orders_${env.runId.replace(/^sluice-/, "")}`;
const applicationId = `sluice-${project}-eligible_orders`;
let ok = false;
try {
  say("sluice init: the orders starter");
  await run(SLUICE, ["init", dir]);

  say("runner image: runner/build.sh builds it unless it is up to date, and prints its ID");
  const image = (await capture("bash", [`${ROOT}runner/build.sh`])).trim().split("\n").at(-1)!;
  if (!/^sha256:[0-9a-f]{64}$/.test(image)) fail(`runner/build.sh printed ${image}`);
  console.log(image);

  say("pointing sluice.yaml at this environment and at the image");
  const manifestPath = `${dir}/sluice.yaml`;
  const manifest = (await Deno.readTextFile(manifestPath))
    .replace(/^project: .*$/m, `project: ${project}`)
    .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${sluiceBootstrap}`)
    .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${runnerBootstrap}`)
    .replace(/(bootstrap_internal: .*\n)/, secured ? `$1${SECURITY}` : "$1")
    .replace(/^network: .*$/m, `network: ${env.network}`)
    .replace(/^image: .*$/m, `image: ${image}`);
  await Deno.writeTextFile(manifestPath, manifest);
  for (const key of ["project", "  bootstrap_host", "  bootstrap_internal", "network", "image"]) {
    console.log(manifest.split("\n").find((l) => l.startsWith(`${key}:`)));
  }
  if (secured) {
    console.log(SECURITY.trimEnd());
    say("the runner's principal may do exactly what its job needs (ACLs granted on the broker)");
    const artifact = await compiledArtifact(dir);
    await grantRunnerAcls(env.bootstrapHost, "User:orders-runner", {
      applicationId,
      inputTopic: artifact.input.topic,
      outputTopic: artifact.output.topic,
      ...(artifact.on_invalid ? { deadLetterTopic: artifact.on_invalid.topic } : {}),
    });
    console.log(
      `User:orders-runner: READ ${artifact.input.topic}, WRITE ${artifact.output.topic}, READ group ${applicationId}, WRITE transactional IDs ${applicationId}*`,
    );
  }

  const sql = await Deno.readTextFile(`${dir}/models/eligible_orders.sql`);
  say("the model it deploys (models/eligible_orders.sql):");
  console.log(sql.trim());

  say("sluice plan --out plan.json: what would change, sealed in a file");
  const planFile = `${dir}/plan.json`;
  await run(SLUICE, ["plan", "--project", dir, "--out", planFile]);

  say("sluice apply --plan plan.json: create the topics, the state volume and the runner");
  await run(SLUICE, ["apply", "--project", dir, "--plan", planFile]);

  say("producing the sample records (samples/raw_orders.jsonl) to raw_orders");
  const samples = (await Deno.readTextFile(`${dir}/samples/raw_orders.jsonl`)).trim().split("\n")
    .map((l) => JSON.parse(l) as { key: string; value: unknown });
  await produce(
    env.bootstrapHost,
    "raw_orders",
    samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
  );
  for (const s of samples) console.log(`${s.key}  ${JSON.stringify(s.value)}`);

  const first = expectedOutput(samples, await compiledArtifact(dir));
  say("the runner's output on eligible_orders, exactly:");
  await checkOutput(env.bootstrapHost, first);
  console.log(
    `${first.length} of ${samples.length} records passed: exactly those the model's WHERE keeps`,
  );

  say("sluice plan again: the running system matches the project");
  const again = JSON.parse(await capture(SLUICE, ["-o", "json", "plan", "--project", dir]));
  await run(SLUICE, ["plan", "--project", dir]);
  if (again.data?.noop !== true) {
    fail(`the repeated plan is not a no-op:\n${JSON.stringify(again)}`);
  }
  await run(SLUICE, ["status", "--project", dir, "--health"]);
  const before = await observed(dir);

  say("the project as a Git repository: this deployment is the first commit");
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "the orders starter, deployed");

  say("changing the filter: amount >= 100 becomes amount >= 200 (a second commit)");
  const sqlPath = `${dir}/models/eligible_orders.sql`;
  await Deno.writeTextFile(sqlPath, sql.replace("amount >= 100", "amount >= 200"));
  console.log((await Deno.readTextFile(sqlPath)).trim());
  await git(dir, "commit", "-q", "-am", "eligible orders: at least 200");

  say("sluice diff --base HEAD~1: the change as Git holds it (offline; no checkout, no fetch)");
  console.log(`$ cd ${dir} && sluice diff --base HEAD~1`);
  const diffed = await new Deno.Command(SLUICE, {
    args: ["diff", "--base", "HEAD~1"],
    cwd: dir,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const diffText = new TextDecoder().decode(diffed.stdout);
  console.log(diffText.trimEnd());
  if (
    diffed.code !== 0 || !diffText.includes("- WHERE amount >= 100 AND paid = TRUE") ||
    !diffText.includes("+ WHERE amount >= 200 AND paid = TRUE") || !diffText.includes("fraud_app")
  ) fail(`sluice diff --base HEAD~1 did not show the filter change (exit ${diffed.code})`);

  say("sluice plan --preview --out replace.plan.json: the reviewed (format 6) replacement");
  const replacePlan = `${dir}/replace.plan.json`;
  await run(SLUICE, ["plan", "--project", dir, "--preview", "--out", replacePlan]);
  const reviewed = JSON.parse(await Deno.readTextFile(replacePlan));
  if (reviewed.format !== 6) fail(`expected a format-6 plan, got format ${reviewed.format}`);
  const review = JSON.parse(
    await capture(SLUICE, ["-o", "json", "plan", "--project", dir, "--preview"]),
  ).data.review;
  const change = review.changes[0];
  const expectedDropped = samples.filter((s) => {
    const v = s.value as { amount: number; paid: boolean };
    return v.paid && v.amount >= 100 && v.amount < 200;
  }).length;
  if (
    change?.predicate?.old?.sql !== "amount >= 100 AND paid = TRUE" ||
    change?.predicate?.new?.sql !== "amount >= 200 AND paid = TRUE" ||
    !change?.impact?.declared?.some((d: { external: string }) => d.external === "fraud_app") ||
    change?.preview?.sampled !== samples.length ||
    change?.preview?.newly_dropped !== expectedDropped || change?.preview?.newly_admitted !== 0 ||
    reviewed.preview?.[0]?.newly_dropped !== expectedDropped
  ) fail(`the review does not say what the change does:\n${JSON.stringify(change, null, 2)}`);
  console.log(
    `reviewed: ${change.predicate.old.sql} → ${change.predicate.new.sql}; affected: ${
      change.impact.declared.map((d: { external: string }) => d.external).join(", ")
    }; of ${change.preview.sampled} sampled records the new filter drops ${change.preview.newly_dropped}`,
  );

  say("sluice apply --plan replace.plan.json: the boundary-by-boundary replacement");
  await run(SLUICE, ["apply", "--project", dir, "--plan", replacePlan]);

  say("producing more orders: from now on only amount >= 200 passes");
  const more = [
    { key: "o-2001", value: { order_id: "o-2001", amount: 150, paid: true, customer: "c-41" } },
    { key: "o-2002", value: { order_id: "o-2002", amount: 200, paid: true, customer: "c-42" } },
    { key: "o-2003", value: { order_id: "o-2003", amount: 900, paid: false, customer: null } },
    { key: "o-2004", value: { order_id: "o-2004", amount: 640, paid: true, customer: "c-07" } },
  ];
  await produce(
    env.bootstrapHost,
    "raw_orders",
    more.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
  );
  for (const s of more) console.log(`${s.key}  ${JSON.stringify(s.value)}`);
  say("the output now: the first records under the old filter, the new ones under the new");
  const second = expectedOutput(more, await compiledArtifact(dir));
  await checkOutput(env.bootstrapHost, [...first, ...second]);

  const after = await observed(dir);
  if (after.applicationId !== before.applicationId) {
    fail(`the application ID changed: ${before.applicationId} → ${after.applicationId}`);
  }
  if (after.volumeInstance !== before.volumeInstance) {
    fail(`the state volume instance changed: ${before.volumeInstance} → ${after.volumeInstance}`);
  }
  for (const [partition, offset] of Object.entries(before.committed)) {
    if (BigInt(after.committed[partition] ?? "-1") < BigInt(offset)) {
      fail(`partition ${partition}: committed offset went backwards`);
    }
  }
  console.log(
    `same application ID ${after.applicationId}, same volume instance ${after.volumeInstance}, ` +
      `offsets ${JSON.stringify(before.committed)} → ${JSON.stringify(after.committed)}`,
  );

  say("sluice plan again: nothing left to do");
  const final = JSON.parse(await capture(SLUICE, ["-o", "json", "plan", "--project", dir]));
  await run(SLUICE, ["plan", "--project", dir]);
  if (final.data?.noop !== true) fail(`the plan after the replacement is not a no-op`);
  await run(SLUICE, ["status", "--project", dir, "--health"]);
  ok = true;
} finally {
  say("cleaning up: the runner container and volume, the broker and the network");
  await removeLabelled("sluice.application-id", applicationId);
  const report = await env.teardown();
  await Deno.remove(dir, { recursive: true });
  if (report.strays.length > 0) {
    console.error(`stray containers were attached to the network: ${report.strays.join(", ")}`);
    ok = false;
  }
  console.log(ok ? "[quickstart] ok" : "[quickstart] FAILED");
}
if (!ok) Deno.exit(1);
