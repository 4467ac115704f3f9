import assert from "node:assert/strict";
import { connect } from "node:net";
import { SluiceError } from "../errors.ts";
import { exitCodeFor } from "../errors.ts";
import {
  describeOrigin,
  failureError,
  guardPort,
  providerFailure,
  type ProviderTarget,
  tlsFailure,
  transportFailure,
  withoutCredentials,
} from "./errors.ts";
import { reachAny } from "./reach.ts";
import { closedPort } from "../../testing/net.ts";

/** The error node:net gives for a connection to `port` (a real ECONNREFUSED). */
function refusedBy(port: number): Promise<Error> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("error", (e) => {
      s.destroy();
      resolve(e);
    });
    s.once("connect", () => {
      s.destroy();
      resolve(new Error("unexpectedly connected"));
    });
  });
}

const KAFKA: ProviderTarget = {
  provider: "kafka",
  address: "localhost:19092",
  origin: {
    setting: "kafka.bootstrap_host",
    location: { file: "sluice.yaml", line: 6, column: 19 },
  },
};
const READ = { operation: "describe", mutation: false };
const WRITE = { operation: "createTopic", mutation: true };

Deno.test("origins read as what to look at: a setting with its place, a variable, a flag, a default", () => {
  assert.equal(describeOrigin(KAFKA.origin), "kafka.bootstrap_host at sluice.yaml:6:19");
  assert.equal(
    describeOrigin({
      variable: "SLUICE_STATE_DSN",
      setting: "state.dsn_env",
      location: { file: "p/sluice.yaml", line: 21, column: 12 },
    }),
    "$SLUICE_STATE_DSN, named by state.dsn_env at p/sluice.yaml:21:12",
  );
  assert.equal(describeOrigin({ variable: "DOCKER_HOST" }), "$DOCKER_HOST");
  assert.equal(describeOrigin({ flag: "--pg-url" }), "--pg-url");
  assert.equal(
    describeOrigin({ default: "DOCKER_HOST is not set" }),
    "the default: DOCKER_HOST is not set",
  );
  assert.equal(
    withoutCredentials("tcp://me:secret@docker.example:2376"),
    "tcp://docker.example:2376",
  );
  assert.equal(withoutCredentials("unix:///var/run/docker.sock"), "unix:///var/run/docker.sock");
});

Deno.test("a refused connection is unreachable (exit 7) for a read and for a mutation: nothing was sent", async () => {
  const port = await closedPort();
  const refused = await refusedBy(port);
  assert.deepEqual(transportFailure(refused), {
    kind: "unreachable",
    detail: `connection refused by 127.0.0.1:${port}`,
  });
  for (const call of [READ, WRITE]) {
    const e = providerFailure(refused, KAFKA, call) as SluiceError;
    assert.equal(e.code, "ENV_KAFKA_UNREACHABLE");
    assert.equal(exitCodeFor(e), 7);
    assert.deepEqual(e.location, KAFKA.origin.location);
    assert.match(
      e.message,
      /^Kafka at localhost:19092 \(kafka\.bootstrap_host at sluice\.yaml:6:19\)/,
    );
    assert.match(e.message, /start the broker, or correct kafka\.bootstrap_host/);
    assert.equal(e.evidence?.operation, call.operation);
  }
});

Deno.test("a connection broken after the request was sent: a read is unreachable, a mutation an unknown outcome", () => {
  const reset = Object.assign(new Error("read ECONNRESET"), {
    code: "ECONNRESET",
    syscall: "read",
  });
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
    code: "ECONNREFUSED",
    syscall: "connect",
  });
  // a retry that was refused after a first attempt was lost: the first attempt decides
  const both = new AggregateError([reset, refused], "failed 2 times");
  assert.equal(transportFailure(both)?.kind, "lost");
  assert.equal((providerFailure(both, KAFKA, READ) as SluiceError).code, "ENV_KAFKA_UNREACHABLE");
  const unknown = providerFailure(both, KAFKA, WRITE) as SluiceError;
  assert.equal(unknown.code, "UNKNOWN_OUTCOME_KAFKA");
  assert.equal(exitCodeFor(unknown), 6);
  assert.match(unknown.message, /may or may not have been applied/);
});

Deno.test("a provider's answers: denied is exit 7, refused and bad response exit 1, a 5xx mutation unknown", () => {
  const docker: ProviderTarget = {
    provider: "docker",
    address: "unix:///var/run/docker.sock",
    origin: { default: "DOCKER_HOST is not set" },
  };
  const start = { operation: "startContainer", mutation: true };
  const cases: Array<[Parameters<typeof failureError>[0], typeof READ, string, number]> = [
    [{ kind: "denied", detail: "permission denied" }, READ, "ENV_DOCKER_DENIED", 7],
    [{ kind: "refused", detail: "(HTTP code 409) name in use" }, start, "DOCKER_REFUSED", 1],
    [{ kind: "server", detail: "(HTTP code 500) boom" }, READ, "DOCKER_BAD_RESPONSE", 1],
    [{ kind: "server", detail: "(HTTP code 500) boom" }, start, "UNKNOWN_OUTCOME_DOCKER", 6],
  ];
  for (const [failure, call, code, exit] of cases) {
    const e = failureError(failure, docker, call);
    assert.equal(e.code, code);
    assert.equal(exitCodeFor(e), exit);
    assert.ok(e.message.includes(failure.detail), e.message);
    assert.ok(
      e.message.includes("unix:///var/run/docker.sock (the default: DOCKER_HOST is not set)"),
    );
    assert.equal(e.location, undefined);
  }
  // the client's own reading decides when no transport error is in the chain
  const answer = Object.assign(new Error("(HTTP code 409) conflict"), { statusCode: 409 });
  const e = providerFailure(answer, docker, start, () => ({ kind: "refused", detail: "conflict" }));
  assert.equal((e as SluiceError).code, "DOCKER_REFUSED");
});

Deno.test("our own bugs and sluice's errors pass through; any other client error is a refusal, never INTERNAL", () => {
  const bug = new TypeError("x is undefined");
  assert.equal(providerFailure(bug, KAFKA, READ), bug);
  const blocked = new SluiceError("BLOCKED_VOLUME_EXISTS", "exists");
  assert.equal(providerFailure(blocked, KAFKA, WRITE), blocked);
  const odd = providerFailure(new Error("something the client says"), KAFKA, READ) as SluiceError;
  assert.equal(odd.code, "KAFKA_REFUSED");
  assert.match(odd.message, /something the client says/);
});

Deno.test("guardPort classifies every method, waits for readiness except on close, passes results through", async () => {
  let readyCalls = 0;
  const port = {
    read: (x: number) => Promise.resolve(x * 2),
    write: () =>
      Promise.reject(Object.assign(new Error("EPIPE"), { code: "EPIPE", syscall: "write" })),
    close: () => Promise.reject(new Error("closing failed")),
  };
  const guarded = guardPort(port, {
    target: KAFKA,
    mutations: new Set(["write"]),
    ready: () => Promise.resolve(void readyCalls++),
  });
  assert.equal(await guarded.read(21), 42);
  await assert.rejects(guarded.write(), (e: SluiceError) => e.code === "UNKNOWN_OUTCOME_KAFKA");
  await assert.rejects(guarded.close(), (e: SluiceError) => e.code === "KAFKA_REFUSED");
  assert.equal(readyCalls, 2);
});

Deno.test("reachAny: a closed port and an unknown host are unreachable at once; a listener is reachable", async () => {
  const port = await closedPort();
  const failure = await reachAny([`127.0.0.1:${port}`, "no-such-host.invalid:9092"], 5_000);
  assert.equal(failure?.kind, "unreachable");
  assert.match(failure!.detail, new RegExp(`connection refused by 127\\.0\\.0\\.1:${port}`));
  assert.match(failure!.detail, /no-such-host\.invalid/);
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const open = (l.addr as Deno.NetAddr).port;
    assert.equal(await reachAny([`127.0.0.1:${port}`, `127.0.0.1:${open}`], 5_000), null);
  } finally {
    l.close();
  }
});

Deno.test("an expired, untrusted or self-signed peer certificate, however wrapped, is an untrusted TLS failure; a plain network error is none", () => {
  for (
    const code of [
      "CERT_HAS_EXPIRED",
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "SELF_SIGNED_CERT_IN_CHAIN",
    ]
  ) {
    const inner = Object.assign(new Error(`certificate: ${code}`), { code });
    const wrapped = new Error("request failed", { cause: new Error("retry", { cause: inner }) });
    assert.deepEqual(tlsFailure(wrapped), {
      kind: "untrusted",
      detail: `certificate: ${code} (${code})`,
    });
  }
  assert.equal(tlsFailure(Object.assign(new Error("refused"), { code: "ECONNREFUSED" })), null);
});
