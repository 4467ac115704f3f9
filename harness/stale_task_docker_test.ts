// test-needs: docker
// Needs: root and dockerd (a private daemon of its own, harness/dockerd.ts) and the base image.
// What the dockerd-restart disruption's operator step (probes/disruption.ts) relies on: every
// trace of a container's start in containerd and runc is read and cleared, including a shim its
// containerd no longer lists, which the next start reuses ("task … already exists").
import assert from "node:assert/strict";
import { dockerCli } from "./docker.ts";
import { loadImages, restartDaemon, sh, startPrivateDocker, stopPrivateDocker } from "./dockerd.ts";
import { BASE_IMAGE } from "./images.ts";
import { bundleDir, cleared, clearStartTraces, startTraces } from "./stale_task.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function docker(host: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return sh(dockerCli(), ["-H", host, ...args]);
}

async function waitStatus(host: string, id: string, want: string): Promise<string> {
  let status = "";
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    status = (await docker(host, "inspect", "-f", "{{.State.Status}}", id)).out;
    if (status === want) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return status;
}

Deno.test(
  "a start's traces in containerd and runc are read from their own sources and cleared, and the container starts again",
  opts,
  async (t) => {
    const d = await startPrivateDocker();
    try {
      await loadImages(d, [BASE_IMAGE]);
      const run = async () => {
        const r = await docker(
          d.host,
          "run",
          "-d",
          "--network",
          "none",
          BASE_IMAGE,
          "sleep",
          "600",
        );
        assert.equal(r.code, 0, r.out);
        return r.out.split("\n").at(-1)!;
      };

      await t.step("a task containerd lists: killed, force-deleted, nothing left", async () => {
        const id = await run();
        const before = await startTraces(d, id);
        assert.ok(before.task?.startsWith(id), `containerd lists the task: ${before.task}`);
        assert.equal(before.shims.length, 1);
        assert.ok(before.shims[0].children.some((c) => c.cmdline.startsWith("sleep")));
        assert.ok(before.runcState);
        const r = await clearStartTraces(d, id);
        assert.ok(cleared(r.after), JSON.stringify(r));
        assert.ok(r.steps.some((s) => s.step === "ctr task delete"));
        assert.equal(await waitStatus(d.host, id, "exited"), "exited");
        const started = await docker(d.host, "start", id);
        assert.equal(started.code, 0, `${started.out}\n${JSON.stringify(r)}`);
        assert.equal(await waitStatus(d.host, id, "running"), "running");
        await docker(d.host, "rm", "-f", id);
      });

      await t.step(
        "a shim its containerd no longer lists refuses the next start ('already exists'); killed with its child, the start succeeds",
        async () => {
          const id = await run();
          // the daemon and its containerd die at once, and the new containerd has no record of
          // the task: the shim, its child and runc's state outlive them
          const ctd = Number(await Deno.readTextFile(`${d.dir}/x/containerd/containerd.pid`));
          const dockerd = Number(await Deno.readTextFile(d.pidfile));
          Deno.kill(dockerd, "SIGKILL");
          Deno.kill(ctd, "SIGKILL");
          for (const end = Date.now() + 30_000; Date.now() < end;) {
            const gone = [dockerd, ctd].every((pid) => {
              try {
                Deno.kill(pid, "SIGCONT");
                return false;
              } catch {
                return true;
              }
            });
            if (gone) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          await Deno.remove(bundleDir(d, id), { recursive: true });
          await restartDaemon(d);
          const before = await startTraces(d, id);
          assert.equal(before.task, null, "the new containerd lists no task for it");
          assert.equal(before.shims.length, 1, JSON.stringify(before));
          assert.ok(before.runcState);
          assert.equal(
            before.bundle,
            false,
            "the bundle directory was removed with containerd's record",
          );
          await waitStatus(d.host, id, "exited");
          const refused = await docker(d.host, "start", id);
          assert.notEqual(refused.code, 0, "the start reuses the old shim and is refused");
          assert.match(refused.out, /already exists/);
          const r = await clearStartTraces(d, id);
          assert.ok(cleared(r.after), JSON.stringify(r));
          assert.ok(r.steps.some((s) => s.step === "kill shim"));
          const started = await docker(d.host, "start", id);
          assert.equal(started.code, 0, `${started.out}\n${JSON.stringify(r)}`);
          assert.equal(await waitStatus(d.host, id, "running"), "running");
          await docker(d.host, "rm", "-f", id);
        },
      );

      await t.step(
        "a bundle directory left by a shim killed mid-create refuses the next start ('file exists'); removed, the start succeeds",
        async () => {
          // what a start refused after the restart can leave once its shim, killed while its
          // `runc create` ran, is gone: containerd's bundle directory, with no task and no shim
          const id = await run();
          assert.equal((await docker(d.host, "stop", "-t", "0", id)).code, 0);
          assert.equal(await waitStatus(d.host, id, "exited"), "exited");
          // the stop deleted the task; its shim exits a moment later (bounded wait)
          let stopped = await startTraces(d, id);
          for (const end = Date.now() + 60_000; !cleared(stopped) && Date.now() < end;) {
            await new Promise((r) => setTimeout(r, 250));
            stopped = await startTraces(d, id);
          }
          assert.ok(cleared(stopped), JSON.stringify(stopped));
          await Deno.mkdir(`${bundleDir(d, id)}/rootfs`, { recursive: true });
          const before = await startTraces(d, id);
          assert.deepEqual(before, { task: null, shims: [], runcState: false, bundle: true });
          const refused = await docker(d.host, "start", id);
          assert.notEqual(refused.code, 0, "the start finds the bundle directory");
          assert.match(refused.out, /file exists/);
          const r = await clearStartTraces(d, id);
          assert.ok(cleared(r.after), JSON.stringify(r));
          assert.ok(r.steps.some((s) => s.step === "remove bundle"));
          const started = await docker(d.host, "start", id);
          assert.equal(started.code, 0, `${started.out}\n${JSON.stringify(r)}`);
          assert.equal(await waitStatus(d.host, id, "running"), "running");
          await docker(d.host, "rm", "-f", id);
        },
      );
    } finally {
      await stopPrivateDocker(d);
    }
  },
);
