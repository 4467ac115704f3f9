// test-needs: docker
/**
 * The harness's label-scoped tear-down on the real daemon: a labelled volume that a container
 * without the label still mounts (as a helper sluice started, or one a killed worker left, would)
 * is removed with that container, which is reported as a stray — never a failed tear-down; and a
 * container's removal ends only once Docker no longer has it, whatever the daemon answered first.
 */
import assert from "node:assert/strict";
import { countLabelled, docker, removeContainerSurely, removeLabelled } from "./docker.ts";
import { BASE_IMAGE } from "./images.ts";

Deno.test("removeLabelled removes a labelled volume an unlabelled container still mounts, reporting it", async () => {
  const d = docker();
  const value = crypto.randomUUID();
  const label = "sluice.test-teardown";
  const volume = `sluice-teardown-${value.slice(0, 8)}`;
  await d.createVolume({ Name: volume, Labels: { [label]: value } });
  const holder = await d.createContainer({
    Image: BASE_IMAGE,
    name: `${volume}-holder`,
    Cmd: ["sleep", "600"],
    HostConfig: { Binds: [`${volume}:/data`] },
  });
  try {
    await holder.start();
    const report = await removeLabelled(label, value);
    assert.equal(report.volumes, 1);
    assert.deepEqual(report.strays, [`${volume}-holder`]);
    assert.deepEqual(await countLabelled(label, value), { containers: 0, volumes: 0, networks: 0 });
    await assert.rejects(() => holder.inspect(), /no such container/i);
  } finally {
    await holder.remove({ force: true }).catch(() => {});
    await d.getVolume(volume).remove({ force: true }).catch(() => {});
  }
});

Deno.test("removeContainerSurely: removals of one running container at once all end with it gone, though the daemon refuses all but one (409 while another removes it, 404 after)", async () => {
  const d = docker();
  const name = `sluice-remove-${crypto.randomUUID().slice(0, 8)}`;
  const c = await d.createContainer({ Image: BASE_IMAGE, name, Cmd: ["sleep", "600"] });
  try {
    await c.start();
    // what the daemon answers the same five requests: one removes it, the others are refused
    const raw = await Promise.allSettled(
      Array.from({ length: 5 }, () => d.getContainer(c.id).remove({ force: true, v: true })),
    );
    assert.ok(raw.some((r) => r.status === "rejected"), "the daemon refused a concurrent removal");
    const again = await d.createContainer({ Image: BASE_IMAGE, name, Cmd: ["sleep", "600"] });
    await again.start();
    await Promise.all(Array.from({ length: 5 }, () => removeContainerSurely(again.id)));
    await assert.rejects(() => again.inspect(), /no such container/i);
    // one that is already gone is no error
    await removeContainerSurely(again.id);
  } finally {
    await d.getContainer(name).remove({ force: true }).catch(() => {});
  }
});
