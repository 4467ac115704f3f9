// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// The contract's "installed import" (C104, issue 30 item 1): the SDK imported as a user outside
// the checkout imports it — by URL, from a scratch directory with no deno.json anywhere above it,
// no --config, no import map — once as file://<checkout>/mod.ts and once as
// http://127.0.0.1:<port>/mod.ts from a static file server over the checkout. Through it, with
// the permissions docs/install.md names: init a fresh project, plan and create, a reviewed
// predicate change planned and applied, then a no-op plan. Read independently of sluice (the
// broker's records and committed offsets, the Docker CLI): output exact before and after, the
// same application ID and volume instance, offsets only forward.
import assert from "node:assert/strict";
import { join, normalize } from "node:path";
import { deno, scratchDir } from "./scratch.ts";
import { sharedEnv } from "../harness/env.ts";
import { INSTALL_PERMISSIONS } from "../harness/install.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import {
  CHANGED_PREDICATE,
  outputAcrossChange,
  removeApplication,
  starterApplicationId,
  volumeLabels,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ROOT = new URL("..", import.meta.url).pathname;

/**
 * A user's script: the SDK's documented calls (README), nothing from the checkout but `mod.ts`
 * at `sdk`. `init DIR` writes the starter; `plan DIR` prints the plan; `apply DIR` plans, keeps
 * the reviewed plan in a file and applies it from there. One JSON line on stdout.
 */
function userScript(sdk: string): string {
  return `import { initProject, openProject, writePlanFile } from "${sdk}";

const [step, dir] = Deno.args;
if (step === "init") {
  const { files } = await initProject(dir);
  console.log(JSON.stringify({ files: files.map((f) => f.path) }));
} else {
  await using project = await openProject({ dir });
  const { plan } = await project.plan();
  const blockers = plan.blockers.map((b) => b.code);
  if (step === "plan" || blockers.length > 0) {
    console.log(JSON.stringify({ format: plan.format, actions: plan.actions, blockers }));
  } else {
    const file = \`\${dir}/\${plan.format}.plan.json\`;
    await writePlanFile(file, plan);
    const outcome = await project.apply({ plan: file });
    console.log(JSON.stringify({ format: plan.format, outcome }));
  }
}
`;
}

/**
 * A static file server over the checkout (what any web server in front of it would do), under a
 * path of its own: Deno caches remote modules by URL, so a fresh base URL per run is a fresh
 * fetch (a port reused by a later run must not hand it this run's modules).
 */
function serveCheckout(): { base: string; requested: Set<string> } & AsyncDisposable {
  const prefix = `/${crypto.randomUUID()}`;
  const requested = new Set<string>();
  const types: Record<string, string> = {
    ".ts": "application/typescript; charset=utf-8",
    ".json": "application/json",
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = normalize(decodeURIComponent(new URL(req.url).pathname));
      const path = url.slice(prefix.length);
      const file = join(ROOT, path);
      if (req.method !== "GET" || !url.startsWith(`${prefix}/`) || !file.startsWith(ROOT)) {
        return new Response("no", { status: 403 });
      }
      try {
        const body = await Deno.readFile(file);
        requested.add(path);
        const ext = /\.[a-z]+$/.exec(path)?.[0] ?? "";
        return new Response(body, { headers: { "content-type": types[ext] ?? "text/plain" } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  const { port } = server.addr as Deno.NetAddr;
  return {
    base: `http://127.0.0.1:${port}${prefix}`,
    requested,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * The journey through the SDK imported from `sdk`, by a script in a scratch directory run with
 * the documented permissions and `extra` ones (`--allow-import` for an http:// SDK).
 */
async function journeyThrough(sdk: string, extra: string[]): Promise<void> {
  const env = await sharedEnv();
  const work = await scratchDir();
  let appId: string | null = null;
  try {
    // no import map applies here: a bare specifier does not resolve (so the SDK's must not need one)
    await Deno.writeTextFile(join(work, "bare.ts"), 'import "yaml";\n');
    const bare = await deno(["run", "bare.ts"], work);
    assert.notEqual(bare.code, 0, bare.all);
    assert.match(bare.stderr, /"yaml"/);

    await Deno.writeTextFile(join(work, "journey.ts"), userScript(sdk));
    const script = async (step: string, dir: string) => {
      const r = await deno(
        ["run", ...INSTALL_PERMISSIONS, ...extra, "journey.ts", step, dir],
        work,
      );
      assert.equal(r.code, 0, `${step}: ${r.all}`);
      return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    };
    // a TypeScript user's script type-checks against the SDK too (its types resolve without the map)
    const checked = await deno(["check", ...extra, "journey.ts"], work);
    assert.equal(checked.code, 0, checked.all);

    // a fresh project, by the SDK's initProject, pointed at this environment
    const dir = join(work, "orders");
    const init = await script("init", dir);
    assert.ok(init.files.some((f: string) => f.endsWith("sluice.yaml")), JSON.stringify(init));
    const p = await pointStarterAt(dir, env, { image: await runnerImageId() });
    appId = starterApplicationId(p.name);

    // create
    const created = await script("apply", dir);
    assert.equal(created.outcome.kind, "change", JSON.stringify(created));
    const runner = created.outcome.result.runners[0];
    assert.equal(runner.application_id, appId);
    const volume = `${appId}-state`;
    assert.equal((await volumeLabels(volume))["sluice.volume-instance"], runner.volume_instance);

    const output = outputAcrossChange(env.bootstrapHost, p, appId);
    await output.beforeChange();

    // the predicate change: planned (a reviewed format-6 plan) and applied through the SDK
    await p.setPredicate(CHANGED_PREDICATE);
    const replaced = await script("apply", dir);
    assert.equal(replaced.format, 6, JSON.stringify(replaced));
    assert.equal(replaced.outcome.kind, "replacement", JSON.stringify(replaced));
    assert.equal(replaced.outcome.result.outcome, "completed", JSON.stringify(replaced));

    // output exact: the old predicate's records once, then the new predicate's; the same
    // application ID (offsets only forward) and volume instance
    await output.afterChange();

    // then a no-op
    const again = await script("plan", dir);
    assert.deepEqual({ actions: again.actions, blockers: again.blockers }, {
      actions: [],
      blockers: [],
    });
  } finally {
    if (appId) await removeApplication(appId);
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

Deno.test(
  "the SDK imported by file:// URL from a scratch directory, no import map: init, create, a predicate change, exact output, same identity, then no-op",
  opts,
  async () => {
    await journeyThrough(new URL("../mod.ts", import.meta.url).href, []);
  },
);

Deno.test(
  "the SDK imported by http:// URL from a static server, no import map: init, create, a predicate change, exact output, same identity, then no-op",
  opts,
  async () => {
    await using served = serveCheckout();
    await journeyThrough(`${served.base}/mod.ts`, [`--allow-import=${new URL(served.base).host}`]);
    // the SDK came from the server: mod.ts and lib/, the version pins imported as text
    for (const path of ["/mod.ts", "/lib/sdk/project.ts", "/scripts/versions.sh"]) {
      assert.ok(served.requested.has(path), `${path} was not fetched from ${served.base}`);
    }
  },
);
