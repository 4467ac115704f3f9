/**
 * The project commands end to end through bin/sluice: init → validate → compile, the
 * `-o json` envelope, exit statuses, and --strict.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../../lib/artifact/canonical.ts";

const SLUICE = fileURLToPath(new URL("../../bin/sluice", import.meta.url));

async function sluice(cwd: string, ...args: string[]) {
  // an unusual locale and time zone must not change any byte of the output
  const env = { TZ: "Pacific/Kiritimati", LC_ALL: "tr_TR.UTF-8", LANG: "tr_TR.UTF-8" };
  const out = await new Deno.Command(SLUICE, { args, cwd, env, stdout: "piped", stderr: "piped" })
    .output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("init, validate and compile the starter with -o json", async () => {
  const root = await Deno.makeTempDir({ prefix: "sluice-cli-" });
  const dir = join(root, "orders");
  const init = await sluice(root, "-o", "json", "init", dir);
  strictEqual(init.code, 0, init.stderr);
  strictEqual(JSON.parse(init.stdout).data.files.length, 4);

  const again = await sluice(root, "init", dir);
  strictEqual(again.code, 3);
  strictEqual(again.stderr.includes("PROJECT_EXISTS"), true);

  const validate = await sluice(dir, "-o", "json", "validate");
  strictEqual(validate.code, 0, validate.stdout + validate.stderr);
  const v = JSON.parse(validate.stdout);
  strictEqual(v.ok, true);
  strictEqual(v.data.environments[0].models[0].application_id, "sluice-orders-eligible_orders");

  const compiled = await sluice(dir, "-o", "json", "compile", "--out", "out");
  strictEqual(compiled.code, 0, compiled.stderr);
  const c = JSON.parse(compiled.stdout);
  const bytes = await readFile(join(dir, "out", "eligible_orders.artifact.json"));
  strictEqual(sha256Hex(bytes), c.data.files[0].sha256);
  const golden = new URL("../golden/starter/eligible_orders.artifact.json.golden", import.meta.url);
  deepStrictEqual(bytes, await readFile(golden));
  strictEqual(
    await readFile(join(dir, "out", "eligible_orders.artifact.sha256"), "utf8"),
    `${c.data.files[0].sha256}  eligible_orders.artifact.json\n`,
  );
});

Deno.test("validate reports warnings, and fails under --strict; errors exit 3", async () => {
  const root = await Deno.makeTempDir({ prefix: "sluice-cli-" });
  await sluice(root, "init", root, "--force");
  await writeFile(join(root, "models/eligible_orders.sql"), "SELECT order_id FROM raw_orders\n");
  const loose = await sluice(root, "validate");
  strictEqual(loose.code, 0);
  strictEqual(loose.stderr.includes("warning[PROJECT_EXTERNAL_COLUMN_MISSING]"), true);
  const strict = await sluice(root, "-o", "json", "validate", "--strict");
  strictEqual(strict.code, 3);
  deepStrictEqual(JSON.parse(strict.stdout).errors.map((e: { code: string }) => e.code), [
    "PROJECT_EXTERNAL_COLUMN_MISSING",
  ]);
  await writeFile(join(root, "models/eligible_orders.sql"), "SELECT order_id FROM raw_orders x");
  const bad = await sluice(root, "validate", "--project", root);
  strictEqual(bad.code, 3);
  strictEqual(bad.stderr.includes("error[SQL_UNSUPPORTED]"), true);
  strictEqual(bad.stderr.includes("eligible_orders.sql:1:33"), true, bad.stderr);
});

Deno.test("--dry-run lists files and writes nothing", async () => {
  const root = await Deno.makeTempDir({ prefix: "sluice-cli-" });
  const dry = await sluice(root, "init", "p", "--dry-run");
  strictEqual(dry.code, 0);
  strictEqual(dry.stdout.includes("would write 4 files"), true);
  const entries = [...Deno.readDirSync(root)];
  strictEqual(entries.length, 0);
});

Deno.test("validate checks every environment; compile needs --env and writes per environment", async () => {
  const root = await Deno.makeTempDir({ prefix: "sluice-cli-" });
  await sluice(root, "init", root);
  const manifest = await readFile(join(root, "sluice.yaml"), "utf8");
  await writeFile(
    join(root, "sluice.yaml"),
    `${manifest}environments:\n  dev: {}\n  prod:\n    initial_offsets: latest\n`,
  );
  const validate = await sluice(root, "-o", "json", "validate");
  strictEqual(validate.code, 0, validate.stdout);
  deepStrictEqual(
    JSON.parse(validate.stdout).data.environments.map((
      e: { environment: string; models: Array<{ application_id: string }> },
    ) => [e.environment, e.models[0].application_id]),
    [["dev", "sluice-orders-dev-eligible_orders"], ["prod", "sluice-orders-prod-eligible_orders"]],
  );
  const bare = await sluice(root, "-o", "json", "compile");
  strictEqual(bare.code, 3);
  strictEqual(JSON.parse(bare.stdout).errors[0].code, "MANIFEST_ENVIRONMENT_REQUIRED");
  const prod = await sluice(root, "-o", "json", "compile", "--env", "prod");
  strictEqual(prod.code, 0, prod.stderr);
  const written = await readFile(
    join(root, ".sluice", "artifacts", "prod", "eligible_orders.artifact.json"),
    "utf8",
  );
  const artifact = JSON.parse(written);
  strictEqual(artifact.environment, "prod");
  strictEqual(artifact.initial_offsets, "latest");
});
