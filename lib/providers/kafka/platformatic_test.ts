// Needs nothing running: the addresses are a closed port and a name that does not resolve.
import assert from "node:assert/strict";
import {
  AuthenticationError,
  MultipleErrors,
  NetworkError,
  ProtocolError,
  ResponseError,
  TimeoutError,
} from "@platformatic/kafka";
import type { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { closedPort } from "../../../testing/net.ts";
import { KAFKA_MUTATIONS, kafkaCallSubject, kafkaFailure } from "./_failure.ts";
import { chainMessages, guardPort } from "../errors.ts";
import { platformaticKafka } from "./platformatic.ts";

const origin = {
  setting: "kafka.bootstrap_host",
  location: { file: "/p/sluice.yaml", line: 6, column: 19 },
};

Deno.test("a refused bootstrap broker is ENV_KAFKA_UNREACHABLE at the first call, naming the address and its line", async () => {
  const port = await closedPort();
  const kafka = platformaticKafka(`127.0.0.1:${port}`, { origin });
  try {
    for (const call of [() => kafka.describe(["t"]), () => kafka.createTopic("t", 1)]) {
      const e = await call().then(() => assert.fail("no error"), (e: SluiceError) => e);
      assert.equal(e.code, "ENV_KAFKA_UNREACHABLE");
      assert.equal(exitCodeFor(e), 7);
      assert.deepEqual(e.location, origin.location);
      assert.ok(
        e.message.startsWith(
          `Kafka at 127.0.0.1:${port} (kafka.bootstrap_host at /p/sluice.yaml:6:19) is unreachable: connection refused by 127.0.0.1:${port}`,
        ),
        e.message,
      );
      assert.equal(e.evidence?.operation, "connect");
    }
  } finally {
    await kafka.close();
  }
});

Deno.test("an unknown host and an address without origin: unreachable, named as given", async () => {
  const kafka = platformaticKafka("no-such-host.invalid:9092");
  try {
    const e = await kafka.describeGroup("g").then(
      () => assert.fail("no error"),
      (e: SluiceError) => e,
    );
    assert.equal(e.code, "ENV_KAFKA_UNREACHABLE");
    assert.match(
      e.message,
      /^Kafka at no-such-host\.invalid:9092 \(given by the caller\) is unreachable: the host name does not resolve/,
    );
    assert.equal(e.location, undefined);
  } finally {
    await kafka.close();
  }
});

Deno.test("the client's errors read as: a broker's answer refused, a broken connection lost, auth denied", () => {
  const exists = new ResponseError(
    19,
    7,
    { "/topics/0": [36, "Topic 'orders' already exists."] },
    {},
  );
  assert.deepEqual(kafkaFailure(new MultipleErrors("Creating topics failed.", [exists])), {
    kind: "refused",
    detail: "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.",
  });
  assert.deepEqual(kafkaFailure(new ProtocolError("GROUP_AUTHORIZATION_FAILED")), {
    kind: "denied",
    detail: "GROUP_AUTHORIZATION_FAILED: Group authorization failed.",
  });
  assert.equal(kafkaFailure(new AuthenticationError("SASL handshake failed"))?.kind, "denied");
  const closed = new MultipleErrors("metadata failed 4 times.", [
    new NetworkError("Connection closed"),
    new TimeoutError("Request timed out"),
  ]);
  assert.deepEqual(kafkaFailure(closed), { kind: "lost", detail: "Connection closed" });
  // a connection that was never made is not "lost": the shared transport rules call it unreachable
  const refused = new NetworkError("Connection to b:9092 failed.", {
    cause: Object.assign(new Error("connect ECONNREFUSED"), {
      code: "ECONNREFUSED",
      syscall: "connect",
    }),
  });
  assert.equal(kafkaFailure(new MultipleErrors("Cannot connect to any broker.", [refused])), null);
  assert.equal(kafkaFailure(new Error("not the client's")), null);
});

// Issue 18 item 7: a client error nothing classifies left only its outer words ("Listing topics
// failed.") as the whole explanation; the message now says what the call was doing (its topics
// and groups), against which broker, and every distinct message of the client's chain (what
// was found), and the client's error stays the cause.
Deno.test("an unclassified client error names the call's subject and the client's whole chain, keeping it as the cause", async () => {
  const inner = new MultipleErrors("metadata failed 4 times.", [
    new Error("Client closed while retrying metadata."),
  ]);
  const listing = new MultipleErrors("Listing topics failed.", [inner]);
  const port = {
    describe: (_topics: string[]) => Promise.reject(listing),
    createTopic: (_name: string, _partitions: number) => Promise.reject(listing),
  };
  const guarded = guardPort(port, {
    target: { provider: "kafka", address: "broker-1:9092", origin },
    mutations: KAFKA_MUTATIONS as ReadonlySet<keyof typeof port & string>,
    specific: kafkaFailure,
    what: kafkaCallSubject,
  });
  const e = await guarded.describe(["orders", "eligible_orders"]).then(
    () => assert.fail("no error"),
    (e: SluiceError) => e,
  );
  assert.equal(
    e.message,
    "Kafka at broker-1:9092 (kafka.bootstrap_host at /p/sluice.yaml:6:19) refused describe " +
      "(reading topics orders, eligible_orders): Listing topics failed. ← metadata failed 4 times. " +
      "← Client closed while retrying metadata.",
  );
  assert.equal(e.cause, listing, "the client's error is the cause");
  assert.equal(e.evidence?.what, "reading topics orders, eligible_orders");
  assert.equal(
    e.evidence?.client_error,
    "Listing topics failed. ← metadata failed 4 times. ← Client closed while retrying metadata.",
  );
  const created = await guarded.createTopic("orders", 3).then(
    () => assert.fail("no error"),
    (e: SluiceError) => e,
  );
  assert.match(created.message, /refused createTopic \(creating topic orders with 3 partitions\)/);
});

Deno.test("a client's words never carry credentials into the message or evidence", () => {
  const e = new MultipleErrors("Connecting failed.", [
    new Error("could not reach sasl://svc:hunter2@broker-1:9092"),
  ]);
  const text = chainMessages(e);
  assert.ok(!text.includes("hunter2"), text);
  assert.equal(text, "Connecting failed. ← could not reach sasl://<redacted>@broker-1:9092");
});
