/**
 * The doc tests (part of `deno task check`): every `@example` of `mod.ts` and of each module that
 * declares one of its public symbols (found from `deno doc --json mod.ts` as `tools/doc_check.ts`
 * finds them, so a new export's examples run the day it is added) compiles and runs under
 * `deno test --doc`. They run in a scratch directory holding what the examples name, read-only
 * and offline: the starter project `./orders` (`initProject`) with its local state store
 * initialized, in a Git repository whose `main` has two commits (`HEAD~1` exists), and
 * `replace.plan.json`, an offline plan of it. An example that needs a running Docker daemon or
 * Kafka broker is fenced `ts ignore` and says why beside it; none needs more than this.
 *
 *   deno run -A tools/doc_examples.ts
 *
 * @module
 */
import { join } from "node:path";
import { declaringModules, publicSymbols } from "./doc_check.ts";
import { initProject } from "../lib/project/starter.ts";
import { openProject } from "../lib/sdk/project.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    const dec = new TextDecoder();
    throw new Error(`${cmd} ${args.join(" ")}: ${dec.decode(out.stdout)}${dec.decode(out.stderr)}`);
  }
}

/** The scratch directory the examples run in (see the module documentation). */
export async function exampleFixture(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-doc-tests-" });
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=doc", "-c", "user.email=doc@example.com", ...args], dir);
  await git("init", "-q", "-b", "main");
  const orders = join(dir, "orders");
  await initProject(orders);
  await git("add", "-A");
  await git("commit", "-q", "-m", "the starter project");
  const model = join(orders, "models", "eligible_orders.sql");
  await Deno.writeTextFile(model, (await Deno.readTextFile(model)).replace(/WHERE .*$/m, "$& "));
  await git("commit", "-q", "-am", "a second commit");
  {
    await using project = await openProject({ dir: orders });
    await project.initState();
    const { plan } = await project.plan({ offline: true });
    await writePlanFile(join(dir, "replace.plan.json"), plan);
  }
  return dir;
}

if (import.meta.main) {
  const modules = declaringModules(await publicSymbols());
  const dir = await exampleFixture();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", "--doc", "--parallel", "--config", join(ROOT, "deno.json"), ...modules],
      cwd: dir,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!out.success) Deno.exit(1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
