// test-needs: docker
/**
 * The harness's label-scoped tear-down on the real daemon: a labelled volume that a container
 * without the label still mounts (as a helper sluice started, or one a killed worker left, would)
 * is removed with that container, which is reported as a stray — never a failed tear-down.
 */
import assert from "node:assert/strict";
import { countLabelled, docker, removeLabelled } from "./docker.ts";
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
