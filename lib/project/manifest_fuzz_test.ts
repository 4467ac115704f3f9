/**
 * Fuzzing the manifest reader with mutations of the starter manifest: every input must load
 * or fail with located SluiceErrors; nothing else may escape.
 */
import { ok } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { readManifest } from "./manifest.ts";
import { starterFiles } from "./starter.ts";
import { seeded } from "../../testing/seeded.ts";

const SEED = 7;
const STARTER = starterFiles()[0].content;
/** The starter with a Connect cluster, a source and a sink connector and a removal. */
const WITH_CONNECTORS = `${STARTER}
connect:
  main: { rest_host: "http://127.0.0.1:8083", rest_internal: "http://connect:8083" }
connectors:
  orders_in:
    cluster: main
    kind: source
    class: org.apache.kafka.connect.file.FileStreamSourceConnector
    topics: [raw_orders]
    config: { file: /data/orders.jsonl, topic: raw_orders, tasks.max: 1 }
  orders_out:
    cluster: main
    kind: sink
    class: org.apache.kafka.connect.file.FileStreamSinkConnector
    topics: [eligible_orders]
    config:
      file: /data/eligible.jsonl
      sftp.password: "\${env:SINK_PW}"
lifecycle:
  connector_removals:
    - { logical_name: old_sink, connector: sluice-orders-old_sink, cluster: main }
`;
const PIECES = [
  ":",
  "-",
  " ",
  "\n",
  "  ",
  "{",
  "}",
  "[",
  "]",
  ",",
  "'",
  '"',
  "#",
  "&a",
  "*a",
  "!!str ",
  "null",
  "~",
  "3",
  "-1",
  "1.5",
  "true",
  "x",
  "kind: external",
  "partitions: 0",
  "\t",
  "${env:",
  "${env:X}",
  "${",
  "kind: sink",
  "cluster: main",
  "http://u:p@h:1",
];

function fuzz(base: string, label: string): void {
  const rand = seeded(SEED);
  const deadline = Date.now() + 20_000;
  let n = 0;
  let accepted = 0;
  for (; n < 2000 && Date.now() < deadline; n++) {
    let text = base;
    const edits = 1 + Math.floor(rand() * 3);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rand() * text.length);
      const op = rand();
      if (op < 0.35) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rand() * 8));
      else if (op < 0.7) {
        text = text.slice(0, at) + PIECES[Math.floor(rand() * PIECES.length)] + text.slice(at);
      } else {
        const lines = text.split("\n");
        const i = Math.floor(rand() * lines.length);
        lines.splice(i, 1);
        text = lines.join("\n");
      }
    }
    try {
      const { manifest, errors } = readManifest(text, "sluice.yaml");
      if (manifest) accepted++;
      for (const err of errors) {
        ok(err instanceof SluiceError && err.location, `${err.code} unlocated`);
      }
      ok((manifest === null) === (errors.length > 0));
    } catch (e) {
      throw new Error(`non-SluiceError for ${JSON.stringify(text)}: ${e}`, { cause: e });
    }
  }
  console.log(`manifest fuzz (${label}): ${n} inputs (seed ${SEED}), ${accepted} accepted`);
  ok(n >= 500);
  ok(accepted > 0, "some mutations must still be valid, or the base itself is broken");
}

Deno.test("fuzz: mutated manifests fail only with located SluiceErrors", () => {
  fuzz(STARTER, "starter");
});

Deno.test("fuzz: mutated connector and lifecycle sections fail only with located errors", () => {
  ok(readManifest(WITH_CONNECTORS, "sluice.yaml").manifest, "the unmutated base is valid");
  fuzz(WITH_CONNECTORS, "connectors");
});
