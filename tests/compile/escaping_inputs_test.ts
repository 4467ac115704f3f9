/**
 * Project inputs cannot escape the project, through any command that reads one (issue 27 item
 * 3/5): a project a pull request wrote plants a symbolic link to a file outside the project
 * holding a secret (as a model, as the manifest, as the models directory), a hard link to it,
 * a `..` and an absolute model path, a FIFO and an oversized model. `validate`, `compile`,
 * `plan --offline` and `diff --base HEAD` through bin/sluice (text and JSON), and the SDK's
 * `openProject(...).validate()`, each refuse it with its code (PROJECT_*; a model path that leaves
 * the project is the manifest's MANIFEST_INVALID_VALUE, at its line and column) and exit 3, within a
 * bounded time (a FIFO never blocks), and print nothing of the outside file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openProject, SluiceError } from "../../mod.ts";

const SLUICE = fileURLToPath(new URL("../../bin/sluice", import.meta.url));
/** Generous: a loaded machine is slow, but a blocked read never ends. */
const BOUND_MS = 180_000;

async function run(cwd: string, args: string[]) {
  const out = await new Deno.Command(SLUICE, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(BOUND_MS),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function git(cwd: string, ...args: string[]) {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

const MODEL = "models/eligible_orders.sql";

interface Attack {
  name: string;
  /** Plant it in `dir`; `outside` is a file outside the project holding the secret. */
  plant: (dir: string, outside: string) => Promise<void>;
  code: string;
}

const setSqlPath = async (dir: string, path: string) => {
  const m = join(dir, "sluice.yaml");
  const text = await Deno.readTextFile(m);
  assert.ok(text.includes(`sql: ${MODEL}`), "the starter's model path moved");
  await Deno.writeTextFile(m, text.replace(`sql: ${MODEL}`, `sql: ${path}`));
};

const ATTACKS: Attack[] = [
  {
    name: "the model is a symbolic link to a file outside",
    plant: async (dir, outside) => {
      await Deno.remove(join(dir, MODEL));
      await Deno.symlink(outside, join(dir, MODEL));
    },
    code: "PROJECT_SYMLINK_INPUT",
  },
  {
    name: "the manifest is a symbolic link to a file outside",
    plant: async (dir, outside) => {
      await Deno.remove(join(dir, "sluice.yaml"));
      await Deno.symlink(outside, join(dir, "sluice.yaml"));
    },
    code: "PROJECT_SYMLINK_INPUT",
  },
  {
    name: "the models directory is a symbolic link to a directory outside",
    plant: async (dir, outside) => {
      const elsewhere = `${outside}.dir`;
      await Deno.mkdir(elsewhere);
      await Deno.copyFile(outside, join(elsewhere, "eligible_orders.sql"));
      await Deno.remove(join(dir, "models"), { recursive: true });
      await Deno.symlink(elsewhere, join(dir, "models"));
    },
    code: "PROJECT_SYMLINK_INPUT",
  },
  {
    name: "the model is a hard link to a file outside",
    plant: async (dir, outside) => {
      await Deno.remove(join(dir, MODEL));
      await Deno.link(outside, join(dir, MODEL));
    },
    code: "PROJECT_HARDLINK_INPUT",
  },
  {
    name: "the model path climbs out with '..'",
    plant: (dir, outside) => setSqlPath(dir, `../${outside.split("/").at(-1)}`),
    // the manifest's own check, with its file:line:col, before the reader is asked
    code: "MANIFEST_INVALID_VALUE",
  },
  {
    name: "the model path is absolute",
    plant: (dir, outside) => setSqlPath(dir, outside),
    code: "MANIFEST_INVALID_VALUE",
  },
  {
    name: "the model is a FIFO",
    plant: async (dir) => {
      await Deno.remove(join(dir, MODEL));
      const out = await new Deno.Command("mkfifo", { args: [join(dir, MODEL)] }).output();
      assert.equal(out.code, 0);
    },
    code: "PROJECT_INPUT_NOT_REGULAR",
  },
  {
    name: "the model is larger than the bound",
    plant: async (dir) => {
      const f = await Deno.open(join(dir, MODEL), { write: true, truncate: true });
      await f.truncate(17 * 1024 * 1024);
      f.close();
    },
    code: "PROJECT_INPUT_TOO_LARGE",
  },
];

const COMMANDS: Array<{ args: string[]; formats: string[] }> = [
  { args: ["validate"], formats: ["text", "json"] },
  { args: ["compile"], formats: ["json"] },
  { args: ["plan", "--offline"], formats: ["text", "json"] },
  { args: ["diff", "--base", "HEAD"], formats: ["json"] },
];

for (const attack of ATTACKS) {
  Deno.test(`every command refuses an input that escapes the project: ${attack.name}`, async () => {
    const root = await Deno.makeTempDir({ prefix: "sluice-escape-" });
    try {
      const secret = `Outs1de${crypto.randomUUID().slice(0, 12)}`;
      const outside = join(root, "credentials.txt");
      // a line that would be a YAML key and a SQL token alike, were it ever read and excerpted
      await Deno.writeTextFile(outside, `aws_secret_access_key ${secret}\n`);
      const init = await run(root, ["init", "p"]);
      assert.equal(init.code, 0, init.stderr);
      const dir = join(root, "p");
      await git(dir, "init", "-q");
      await git(dir, "add", "-A");
      await git(dir, "commit", "-q", "-m", "starter");
      await attack.plant(dir, outside);
      for (const { args, formats } of COMMANDS) {
        for (const format of formats) {
          const r = await run(dir, ["-o", format, ...args]);
          const what = `${attack.name}: sluice -o ${format} ${args.join(" ")} (exit ${r.code})`;
          assert.equal(r.stdout.includes(secret), false, `${what} printed it:\n${r.stdout}`);
          assert.equal(r.stderr.includes(secret), false, `${what} printed it:\n${r.stderr}`);
          assert.equal(r.code, 3, `${what}\n${r.stdout}${r.stderr}`);
          const said = format === "json"
            ? JSON.parse(r.stdout).errors.map((e: { code: string }) => e.code)
            : [r.stderr];
          assert.ok(
            said.some((s: string) => s.includes(attack.code)),
            `${what}: no ${attack.code}`,
          );
        }
      }
      // the SDK reads through the same reader
      const sdk = await (async () => {
        await using p = await openProject({ dir });
        return await p.validate();
      })().then(() => null, (e: unknown) => e);
      assert.ok(sdk instanceof SluiceError, `${attack.name}: the SDK accepted it (${sdk})`);
      assert.equal(sdk.code, attack.code, sdk.message);
      assert.equal(sdk.message.includes(secret), false, sdk.message);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
