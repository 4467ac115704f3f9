import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import {
  RUNNER_CLIENT_FILE_MODE,
  withRunnerClientFile,
  withRunnerPrincipal,
} from "./runner_client_file.ts";
import type { Manifest } from "../../project/manifest.ts";
import { PLAINTEXT } from "../../project/kafka_security.ts";
import { RUNNER_CLIENT_FILE_PATH, runnerClientFile } from "../kafka/security.ts";
import type { DockerPort } from "./port.ts";
import { sha256Hex } from "../../artifact/canonical.ts";

/** A Docker port that records the calls the decorator makes (the others are never reached). */
function recording(calls: unknown[]): DockerPort {
  return {
    writeContainerFile: (
      id: string,
      path: string,
      bytes: Uint8Array,
      options?: { mode?: number },
    ) => {
      calls.push(["write", id, path, new TextDecoder().decode(bytes), options?.mode]);
      return Promise.resolve();
    },
    startContainer: (id: string) => {
      calls.push(["start", id]);
      return Promise.resolve();
    },
    signalTerm: (id: string) => {
      calls.push(["term", id]);
      return Promise.resolve();
    },
  } as unknown as DockerPort;
}

const SASL_SSL = {
  protocol: "SASL_SSL" as const,
  tls: { ca: "CA-PEM", cert: null, key: null, hostnameVerification: true },
  sasl: { mechanism: "SCRAM-SHA-512" as const, username: "orders-runner", password: "s3cret" },
  fingerprint: "f",
};

Deno.test("runner client file: copied into the container (mode 0400) right before every start", async () => {
  const calls: unknown[] = [];
  const file = runnerClientFile(SASL_SSL)!;
  const docker = withRunnerClientFile(recording(calls), file);
  await docker.startContainer("c1");
  await docker.signalTerm("c1");
  await docker.startContainer("c1");
  const text = new TextDecoder().decode(file.bytes);
  deepStrictEqual(calls, [
    ["write", "c1", RUNNER_CLIENT_FILE_PATH, text, RUNNER_CLIENT_FILE_MODE],
    ["start", "c1"],
    ["term", "c1"],
    ["write", "c1", RUNNER_CLIENT_FILE_PATH, text, RUNNER_CLIENT_FILE_MODE],
    ["start", "c1"],
  ]);
  strictEqual(RUNNER_CLIENT_FILE_MODE, 0o400);
});

Deno.test("runner client file: PLAINTEXT leaves the port as it is (no file, no write)", () => {
  const port = recording([]);
  strictEqual(withRunnerClientFile(port, null), port);
});

Deno.test("runner client file: the format the runner reads, its sha256 over exactly its bytes", () => {
  const file = runnerClientFile(SASL_SSL)!;
  strictEqual(
    new TextDecoder().decode(file.bytes),
    '{"format":"sluice.runner-kafka-client","protocol":"SASL_SSL",' +
      '"sasl":{"mechanism":"SCRAM-SHA-512","password":"s3cret","username":"orders-runner"},' +
      '"tls":{"ca_pem":"CA-PEM","cert_pem":null,"hostname_verification":true,"key_pem":null},' +
      '"version":1}',
  );
  strictEqual(file.sha256, sha256Hex(file.bytes));
  // a rotated password is another file, told apart by its hash alone
  const rotated = runnerClientFile({ ...SASL_SSL, sasl: { ...SASL_SSL.sasl, password: "other" } })!;
  strictEqual(rotated.sha256 === file.sha256, false);
  strictEqual(file.sha256.includes("s3cret"), false);
});

Deno.test("runner principal: read at the first start; a missing variable starts nothing and is read again next time", async () => {
  const calls: unknown[] = [];
  const port = recording(calls);
  strictEqual(withRunnerPrincipal(port, { kafkaSecurity: PLAINTEXT } as Manifest), port);
  const manifest = {
    kafkaSecurity: {
      protocol: "SASL_PLAINTEXT",
      tls: null,
      admin: null,
      runner: {
        sasl: { mechanism: "PLAIN", username: "r", passwordEnv: "RUNNER_PW" },
        certificate: null,
      },
    },
  } as unknown as Manifest;
  const vars: Record<string, string> = {};
  const docker = withRunnerPrincipal(port, manifest, { get: (n) => vars[n] });
  await rejects(
    docker.startContainer("c1"),
    (e: Error & { code?: string }) =>
      e.code === "ENV_KAFKA_CREDENTIAL_MISSING" && e.message.includes("RUNNER_PW"),
  );
  deepStrictEqual(calls, []);
  vars.RUNNER_PW = "pw-1";
  await docker.startContainer("c1");
  strictEqual(calls.length, 2);
  strictEqual((calls[0] as string[])[0], "write");
  strictEqual((calls[0] as string[])[3].includes('"password":"pw-1"'), true);
  deepStrictEqual(calls[1], ["start", "c1"]);
});
