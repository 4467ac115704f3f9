import assert from "node:assert/strict";
import { ownedConnector, ownedRunner } from "../../testing/state/fixtures.ts";
import {
  emptyOwnership,
  ownedConnectors,
  stateChecksum,
  validateOwnership,
  withConnectors,
  withRetained,
} from "./ownership.ts";

Deno.test("the state checksum is stable and changes with any owned field", () => {
  const own = ownedRunner("orders", null);
  assert.equal(stateChecksum(own), stateChecksum(structuredClone(own)));
  const other = structuredClone(own);
  other.runners[0].volume.instance_id = crypto.randomUUID();
  assert.notEqual(stateChecksum(other), stateChecksum(own));
});

Deno.test("ownership validation names the problem", () => {
  assert.doesNotThrow(() => validateOwnership(emptyOwnership("orders", null)));
  const bad = ownedRunner("orders", "prod");
  bad.runners[0].artifact_sha256 = "XYZ";
  assert.throws(() => validateOwnership(bad), /runner eligible_orders: artifact_sha256/);
  assert.throws(
    () => validateOwnership({ ...emptyOwnership("orders", null), serial: -1 }),
    /serial must be a non-negative integer/,
  );
});

Deno.test("a connector section opts the document into version 2; version 1 keeps its bytes", () => {
  const v1 = ownedRunner("orders", null);
  const before = stateChecksum(v1);
  assert.equal(v1.version, 1);
  assert.equal("connectors" in v1, false);
  assert.deepEqual(ownedConnectors(v1), []);
  const v2 = withConnectors(v1, [
    ownedConnector("orders", null, "b"),
    ownedConnector("orders", null, "a"),
  ]);
  assert.equal(v2.version, 2);
  assert.deepEqual(v2.connectors!.map((c) => c.connector), ["a", "b"], "sorted by name");
  assert.doesNotThrow(() => validateOwnership(v2));
  assert.equal(stateChecksum(v1), before, "the version-1 document is not touched");
  // an empty section stays version 2: a document never goes back
  const empty = withConnectors(v2, []);
  assert.equal(empty.version, 2);
  assert.doesNotThrow(() => validateOwnership(empty));
  assert.notEqual(stateChecksum(empty), before);
});

Deno.test("the connector section is verified record by record", () => {
  const good = withConnectors(emptyOwnership("orders", "prod"), [ownedConnector("orders", "prod")]);
  assert.doesNotThrow(() => validateOwnership(good));
  const cases: Array<[string, (d: typeof good) => void, RegExp]> = [
    ["v1 with a section", (d) => void (d.version = 1), /version-1 document has no connectors/],
    ["v2 without one", (d) => void delete d.connectors, /connectors must be an array/],
    [
      "wrong name",
      (d) => void (d.connectors![0].name = "sluice-orders-orders_out"),
      /name must be sluice-orders-prod-orders_out/,
    ],
    [
      "extra field",
      (d) => Object.assign(d.connectors![0], { config: {} }),
      /fields must be exactly/,
    ],
    [
      "raw endpoint",
      (d) => Object.assign(d.connectors![0].cluster_identity, { endpoint: "http://x" }),
      /cluster_identity/,
    ],
    [
      "digest",
      (d) => void (d.connectors![0].cluster_identity.endpoint_digest = "http://x:8083"),
      /cluster_identity/,
    ],
    [
      "fingerprint",
      (d) => void (d.connectors![0].config_fingerprint = "abc"),
      /config_fingerprint must be 64/,
    ],
    [
      "kind",
      (d) => void ((d.connectors![0] as { kind: string }).kind = "both"),
      /kind must be source or sink/,
    ],
    ["key id", (d) => void (d.connectors![0].secret_key_id = null), /secret_key_id must be 16 hex/],
    [
      "unsorted keys",
      (d) => void (d.connectors![0].secret_keys = ["b", "a"]),
      /secret_keys must be sorted/,
    ],
    [
      "twice",
      (d) => d.connectors!.push(structuredClone(d.connectors![0])),
      /sorted by name, each once/,
    ],
  ];
  for (const [what, edit, message] of cases) {
    const d = structuredClone(good);
    edit(d);
    assert.throws(() => validateOwnership(d), message, what);
  }
  const noSecrets = structuredClone(good);
  noSecrets.connectors![0].secret_keys = [];
  assert.throws(
    () => validateOwnership(noSecrets),
    /secret_key_id must be 16 hex digits with secret keys, null without/,
  );
  noSecrets.connectors![0].secret_key_id = null;
  assert.doesNotThrow(() => validateOwnership(noSecrets));
});

/** What a removal of owned runner `r` keeps (a single runner's record). */
function keptOf(r: ReturnType<typeof ownedRunner>["runners"][number]) {
  return {
    model: r.model,
    application_id: r.application_id,
    volume: r.volume,
    input_topic: "raw_orders",
    removed_by: "op-1",
  };
}

Deno.test("a runner removal's kept records: absent when empty (bytes kept), verified when present", () => {
  const own = ownedRunner("orders", null);
  const bytes = stateChecksum(own);
  assert.equal(stateChecksum(withRetained(own, [])), bytes);
  const r = own.runners[0];
  const kept = keptOf(r);
  const doc = withRetained({ ...own, runners: [] }, [kept]);
  assert.deepEqual(validateOwnership(doc).retained, [kept]);
  assert.throws(() => validateOwnership({ ...doc, retained: [] }), /non-empty/);
  assert.throws(() => validateOwnership({ ...own, retained: [kept] }), /both owned and retained/);
  assert.throws(
    () => validateOwnership({ ...doc, retained: [{ ...kept, input_topic: 3 }] }),
    /needs application_id, volume, input_topic, removed_by/,
  );
  assert.throws(() => validateOwnership({ ...doc, retained: [kept, kept] }), /sorted, each once/);
});

Deno.test("a set's instances: absent for one runner (bytes kept), verified record by record when present", () => {
  const own = ownedRunner("orders", null);
  const bytes = stateChecksum(own);
  const r = own.runners[0];
  const instance = (i: number, endpoint: string | null) => ({
    instance: i,
    endpoint,
    container_name: i === 0 ? r.container_name : `${r.application_id}.${i}`,
    volume: i === 0 ? r.volume : { name: `${r.volume.name}-${i}`, instance_id: `vol-${i}` },
  });
  const set = [instance(0, "east"), instance(1, "west"), instance(2, "east")];
  const withSet = (instances: unknown[]) =>
    ({ ...own, runners: [{ ...r, instances }] }) as unknown as typeof own;
  assert.deepEqual(validateOwnership(withSet(set)).runners[0].instances, set);
  assert.notEqual(stateChecksum(withSet(set)), bytes);
  assert.equal(stateChecksum(own), bytes);
  const refused: Array<[unknown[], RegExp]> = [
    [[instance(0, null)], /2 to 32 instances \(absent for one\)/],
    [[], /2 to 32 instances/],
    [Array.from({ length: 33 }, (_, i) => instance(i, null)), /2 to 32 instances/],
    [[instance(0, null), instance(2, null)], /indexed 0 to N-1 in order/],
    [[instance(1, null), instance(0, null)], /indexed 0 to N-1 in order/],
    [[instance(0, null), { ...instance(1, null), extra: 1 }], /fields must be exactly/],
    [[instance(0, null), { ...instance(1, null), endpoint: "" }], /endpoint must be a name/],
    [[instance(0, null), { ...instance(1, null), volume: { name: "v" } }], /volume \{ name/],
    [[instance(0, null), { ...instance(1, null), container_name: r.container_name }], /twice/],
    [[instance(0, null), { ...instance(1, null), volume: r.volume }], /twice/],
    [[{ ...instance(0, null), container_name: "other" }, instance(1, null)], /instance 0 must be/],
    [
      [{ ...instance(0, null), volume: { name: "v", instance_id: "vol-x" } }, instance(1, null)],
      /instance 0/,
    ],
    [[instance(0, null), "x"], /runner eligible_orders: instance 1/],
  ];
  for (const [instances, why] of refused) {
    assert.throws(() => validateOwnership(withSet(instances)), why, JSON.stringify(instances));
  }
  assert.throws(
    () => validateOwnership({ ...own, runners: [{ ...r, instances: null }] }),
    /2 to 32 instances/,
  );
});

Deno.test("a removed set's retained volumes: absent for one runner, verified record by record when present", () => {
  const own = ownedRunner("orders", null);
  const r = own.runners[0];
  const volume = (i: number) =>
    i === 0 ? r.volume : { name: `${r.volume.name}-${i}`, instance_id: `vol-${i}` };
  const instance = (i: number, endpoint: string | null) => ({
    instance: i,
    endpoint,
    volume: volume(i),
  });
  const kept = keptOf(r);
  const withKept = (instances: unknown) =>
    withRetained({ ...own, runners: [] }, [{ ...kept, instances } as unknown as typeof kept]);
  const set = [instance(0, "east"), instance(1, "west")];
  assert.deepEqual(validateOwnership(withKept(set)).retained![0], { ...kept, instances: set });
  // one runner's record has no instances: its bytes are what they were
  assert.equal(
    stateChecksum(withRetained({ ...own, runners: [] }, [kept])),
    stateChecksum(withRetained({ ...own, runners: [] }, [{ ...kept }])),
  );
  const refused: Array<[unknown, RegExp]> = [
    [[instance(0, null)], /retained runner eligible_orders: instances must list 2 to 32/],
    [
      [instance(0, null), { ...instance(1, null), container_name: "c" }],
      /fields must be exactly endpoint,instance,volume/,
    ],
    [[instance(0, null), { ...instance(1, null), volume: r.volume }], /twice/],
    [
      [{ ...instance(0, null), volume: { name: "v", instance_id: "vol-x" } }, instance(1, null)],
      /instance 0 must be the record's own volume/,
    ],
    [null, /2 to 32 instances/],
  ];
  for (const [instances, why] of refused) {
    assert.throws(() => validateOwnership(withKept(instances)), why, JSON.stringify(instances));
  }
});
