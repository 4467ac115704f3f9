// The documented install (docs/cli.md, "Install"): `deno install --global` from this checkout
// into a temporary root, then the installed `sluice` run by name from PATH in a fresh directory.
// Needs the npm dependencies in Deno's cache (scripts/bootstrap.sh) and, for a built runner
// image to be reported, Docker; without Docker the report says "not built", as the check does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { INSTALL_PERMISSIONS, installSluice } from "../harness/install.ts";
import { ARTIFACT_VERSION } from "../lib/artifact/artifact.ts";
import { PLAN_FORMATS } from "../lib/plan/plan_file.ts";
import { HISTORY_VERSIONS } from "../lib/state/history.ts";
import { STORE_VERSION } from "../lib/state/identity.ts";
import { CONTROL_VERSIONS } from "../lib/state/journal.ts";
import { OWNERSHIP_VERSION } from "../lib/state/ownership.ts";
import { MIGRATIONS } from "../lib/state/postgres/migrations.ts";
import { pinnedVersions, SLUICE_VERSION } from "../lib/version.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("deno install puts sluice on the PATH: init, validate, plan --offline and version -o json run in a fresh directory", async () => {
  await using installed = await installSluice();
  const work = await Deno.makeTempDir({ prefix: "sluice-fresh-" });
  try {
    // the command of docs/cli.md, with the checkout's own paths (harness/install.ts)
    const shim = await Deno.readTextFile(`${installed.root}/bin/sluice`);
    for (const flag of INSTALL_PERMISSIONS) assert.ok(shim.includes(flag), `${flag} in ${shim}`);
    assert.ok(!shim.includes("--allow-all"), shim);

    const sluice = (args: string[], cwd: string) => installed.run(args, cwd);
    const init = await sluice(["init", "orders"], work);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /wrote \d+ files in .*orders/);
    const project = join(work, "orders");
    const validate = await sluice(["validate"], project);
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /^ok: project orders: 1 model\(s\) valid/);
    const offline = await sluice(["-o", "json", "plan", "--offline"], project);
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(JSON.parse(offline.stdout).ok, true);

    const version = await sluice(["-o", "json", "version"], project);
    assert.equal(version.code, 0, version.stderr);
    const env = JSON.parse(version.stdout);
    assert.equal(env.command, "version");
    const data = env.data;
    assert.equal(data.cli, SLUICE_VERSION);
    assert.match(data.deno, /^\d+\.\d+\.\d+/);
    // the same answer as the check itself
    const check = await installed.run([`${ROOT}runner/build.sh`, "--check"], ROOT, {}, "bash");
    assert.equal(data.runner_image, check.code === 0 ? check.stdout.trim() : "not built");
    assert.deepEqual(data.kafka, {
      broker: pinnedVersions().KAFKA_VERSION,
      runner_streams: /<kafka\.version>([^<]+)</.exec(
        await Deno.readTextFile(`${ROOT}runner/pom.xml`),
      )![1],
    });
    assert.deepEqual(data.formats, {
      plan: [...PLAN_FORMATS],
      runner_artifact: ARTIFACT_VERSION,
      journal: [...CONTROL_VERSIONS],
      history: [...HISTORY_VERSIONS],
      ownership: OWNERSHIP_VERSION,
      store_identity: STORE_VERSION,
      postgres_schema: MIGRATIONS.at(-1)!.version,
    });
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
