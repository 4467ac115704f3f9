// test-needs: env
// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// The verifier against real evidence: a small real run of each probe kind (one fault-matrix case
// armed in the stopped window, a stopped and a preflight rejection, the lock race) is written to a
// scratch directory and accepted as it is; then every tampering of testing/tamper.ts is applied to
// a copy and `deno task verify` must reject it with a message naming the case and the assertion.
// The fault-matrix case runs on PostgreSQL state whose DSN carries a planted password: no
// evidence file holds it.
import assert from "node:assert/strict";
import { fileErrors, gitView, type VerifyContext } from "../tools/verify.ts";
import type { EvidenceFile } from "../tools/verify.ts";
import { faultPoints, stopsRunner } from "../probes/catalogue.ts";
import { gitState } from "../probes/provenance.ts";
import { loadRunEventValidator } from "../lib/lineage/validate.ts";
import { TAMPERINGS } from "../testing/tamper.ts";
import { sharedEnv } from "../harness/env.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const opts = { sanitizeOps: false, sanitizeResources: false };

async function probe(dir: string, file: string, args: string[], envFile?: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}probes/${file}`, ...args],
    cwd: ROOT,
    env: { SLUICE_VERIFICATION_DIR: dir, ...(envFile ? { SLUICE_ENV_FILE: envFile } : {}) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, log: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

Deno.test(
  "verify accepts a fresh real run and rejects every tampering of it, naming case and assertion",
  opts,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "sluice-evidence-" });
    try {
      const dirty = (await gitState()).dirty;
      const extra = dirty ? ["--allow-dirty"] : [];
      const point = faultPoints().find(stopsRunner)!;
      // the shared environment, but PostgreSQL reached with a password (the server trusts)
      const dsnPassword = `dsn${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
      const pgUrl = new URL((await sharedEnv()).pgUrl);
      if (pgUrl.username === "") pgUrl.username = "postgres";
      pgUrl.password = dsnPassword;
      const envFile = `${dir}/env-with-password.json`;
      await Deno.writeTextFile(
        envFile,
        JSON.stringify({ ...(await sharedEnv()), pgUrl: pgUrl.toString() }),
      );
      const runs = await Promise.all([
        probe(
          dir,
          "fault_matrix.ts",
          ["--only", point, "--backend", "postgres", ...extra],
          envFile,
        ),
        probe(dir, "rejections.ts", [
          "--only",
          "wrong-mounted-plan,unclean-exit-sigkill-old-runner",
          "--backend",
          "local",
          "--jobs",
          "2",
          ...extra,
        ]),
        probe(dir, "disruption.ts", ["--only", "lock-race", "--backend", "local", ...extra]),
      ]);
      for (const r of runs) assert.equal(r.code, 0, r.log.slice(-3000));

      const schema = JSON.parse(await Deno.readTextFile(`${ROOT}verification/schema.json`));
      const ctx: VerifyContext = {
        allowDirty: dirty,
        allowPartial: true,
        git: gitView,
        now: () => Date.now(),
        conforms: await loadRunEventValidator(),
      };
      const files: Record<string, string> = {};
      for (const name of ["fault-matrix", "rejections", "disruption"]) {
        files[name] = await Deno.readTextFile(`${dir}/${name}.json`);
        const { errors } = await fileErrors(files[name], schema, ctx);
        assert.deepEqual(errors, [], `${name}: the untampered real evidence must verify`);
      }

      // the planted password reached the case (it ran on PostgreSQL and passed) and no file kept it
      const matrix = JSON.parse(files["fault-matrix"]) as EvidenceFile;
      assert.deepEqual(
        matrix.cases.map((c) => [c.backend, c.ok]),
        [["postgres", true]],
      );
      await Deno.remove(envFile);
      for await (const e of Deno.readDir(dir)) {
        const text = await Deno.readTextFile(`${dir}/${e.name}`);
        assert.ok(!text.includes(dsnPassword), `the DSN's password appears in ${e.name}`);
      }

      const applied = new Set<string>();
      for (const [name, text] of Object.entries(files)) {
        for (const t of TAMPERINGS) {
          const doc = JSON.parse(text) as EvidenceFile;
          const target = t.apply(doc);
          if (target === null) continue;
          applied.add(t.name);
          const { errors } = await fileErrors(JSON.stringify(doc), schema, ctx);
          const where = `${name}: ${t.name}`;
          assert.ok(errors.length > 0, `${where}: accepted`);
          if (target.caseId) {
            const named = errors.filter((e) => e.includes(target.caseId!));
            assert.ok(
              named.length > 0,
              `${where}: no message names ${target.caseId}:\n${errors.join("\n")}`,
            );
            if (target.check) {
              assert.ok(
                named.some((e) => e.includes(target.check!)),
                `${where}: no message names ${target.check}:\n${errors.join("\n")}`,
              );
            }
          }
        }
      }
      // every tampering found something to tamper with in real evidence (the dirty-tree one only
      // when the run itself came from a clean tree)
      const missing = TAMPERINGS.filter((t) => !applied.has(t.name)).map((t) => t.name);
      assert.deepEqual(
        missing,
        dirty ? ["evidence of a dirty tree passed off as clean evidence"] : [],
      );
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);
