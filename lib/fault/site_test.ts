import assert from "node:assert/strict";
import { withEnv } from "../../testing/with_env.ts";
import {
  armedFault,
  atSite,
  FAULT_ENV,
  faultSite,
  guardFaultSwitch,
  onCrossing,
  parseFaultPoint,
  siteLocation,
} from "./site.ts";
import type { SluiceError } from "../errors.ts";

const S = faultSite({
  name: "test.site",
  kind: "state",
  description: "a test site",
  where: import.meta.url,
});

Deno.test("a site name must be dotted lower-case", () => {
  assert.throws(() => faultSite({ name: "Bad", kind: "state", description: "", where: "" }));
  assert.throws(() => faultSite({ name: "nodot", kind: "state", description: "", where: "" }));
});

Deno.test("siteLocation is relative to the repository root", () => {
  assert.equal(siteLocation(S), "lib/fault/site_test.ts");
});

Deno.test("parseFaultPoint reads site, side and occurrence", () => {
  assert.deepEqual(parseFaultPoint("a.b:before"), { site: "a.b", side: "before", occurrence: 1 });
  assert.deepEqual(parseFaultPoint("a.b_c.d:after@3"), {
    site: "a.b_c.d",
    side: "after",
    occurrence: 3,
  });
  for (const bad of ["a.b", "a.b:mid", "a.b:after@0", ":before"]) {
    assert.throws(
      () => parseFaultPoint(bad),
      (e) => (e as SluiceError).code === "USAGE_FAULT_POINT",
    );
  }
});

Deno.test("the fault switch is refused without the test-only permission", () => {
  withEnv({ [FAULT_ENV.point]: "test.site:before", [FAULT_ENV.allow]: undefined }, () => {
    assert.throws(
      () => armedFault(),
      (e) => (e as SluiceError).code === "USAGE_FAULT_SWITCH_NOT_ALLOWED",
    );
    assert.throws(() => guardFaultSwitch(new Set(["test.site"])));
  });
  withEnv({ [FAULT_ENV.point]: undefined, [FAULT_ENV.allow]: undefined }, () => {
    assert.equal(armedFault(), null);
    guardFaultSwitch(new Set());
  });
});

Deno.test("guardFaultSwitch rejects a site outside the inventory", () => {
  withEnv({ [FAULT_ENV.point]: "test.other:after", [FAULT_ENV.allow]: "1" }, () => {
    assert.throws(
      () => guardFaultSwitch(new Set(["test.site"])),
      (e) => (e as SluiceError).code === "USAGE_FAULT_POINT",
    );
    guardFaultSwitch(new Set(["test.other"]));
  });
});

Deno.test("crossings are reported before and after, with their occurrence", async () => {
  const seen: string[] = [];
  const stop = onCrossing((c) => seen.push(`${c.site.name}:${c.side}@${c.occurrence}`));
  try {
    const base = (await atSite(S, () => Promise.resolve(1))) +
      (await atSite(S, () => Promise.resolve(2)));
    assert.equal(base, 3);
  } finally {
    stop();
  }
  assert.equal(seen.length, 4);
  assert.match(seen[0], /^test\.site:before@\d+$/);
  const n = Number(seen[0].split("@")[1]);
  assert.deepEqual(seen, [
    `test.site:before@${n}`,
    `test.site:after@${n}`,
    `test.site:before@${n + 1}`,
    `test.site:after@${n + 1}`,
  ]);
});

Deno.test("an armed site kills the process by SIGKILL at the chosen crossing and side", async () => {
  const script = `
    import { atSite, faultSite } from ${JSON.stringify(new URL("./site.ts", import.meta.url).href)};
    const S = faultSite({ name: "child.write", kind: "state", description: "", where: import.meta.url });
    for (let i = 1; i <= 3; i++) {
      await atSite(S, async () => { console.log("call " + i); });
    }
    console.log("survived");
  `;
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    env: { [FAULT_ENV.point]: "child.write:after@2", [FAULT_ENV.allow]: "1" },
    stdout: "piped",
    stderr: "piped",
  });
  const out = await cmd.output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.signal, "SIGKILL");
  assert.deepEqual(stdout.trim().split("\n"), ["call 1", "call 2"]);
  assert.match(stderr, /SLUICE_FAULT_FIRED child\.write:after@2/);
});
