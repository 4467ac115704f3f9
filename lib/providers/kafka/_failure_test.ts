// Needs nothing running: the client and its connections are event emitters, the errors the
// library's own classes with the words Node's TLS gave on a real broker (mutual-TLS listener,
// a client certificate signed by a CA it does not trust: tests/kafka_secure_mtls_docker_kafka_test.ts).
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { MultipleErrors, NetworkError } from "@platformatic/kafka";
import { kafkaFailure, watchConnectionErrors } from "./_failure.ts";
import { failureError } from "../errors.ts";

/** What the socket raised when the broker refused the client certificate (TLS 1.3). */
const alert = () =>
  new NetworkError("Connection error", {
    cause: Object.assign(new Error("received fatal alert: CertificateUnknown"), {
      code: "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN",
    }),
  });

/** What the request in flight on that connection was failed with. */
const closed = () =>
  new MultipleErrors("Listing topics failed.", [
    new MultipleErrors("metadata failed 4 times.", [new NetworkError("Connection closed")]),
  ]);

Deno.test("a connection closed after the broker's certificate alert is a TLS failure naming the client certificate, not a lost broker", () => {
  const errors = watchConnectionErrors();
  const client = new EventEmitter();
  errors.watch(client);
  const connection = new EventEmitter();
  client.emit("client:broker:connect", { broker: { host: "k", port: 9098 }, connection });
  connection.emit("error", alert());

  const failure = kafkaFailure(closed(), errors.take());
  assert.equal(failure?.kind, "untrusted");
  assert.match(failure!.detail, /refused the client certificate/);
  assert.match(failure!.detail, /ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN/);
  const e = failureError(failure!, { provider: "kafka", address: "k:9098", origin: {} }, {
    operation: "describe",
    mutation: false,
  });
  assert.equal(e.code, "ENV_KAFKA_TLS");
  assert.match(e.message, /client certificate/);
  assert.doesNotMatch(e.message, /unreachable|start the broker/);

  // each error is given once: the next failure without an alert is what it was
  assert.deepEqual(errors.take(), []);
  assert.deepEqual(kafkaFailure(closed(), errors.take()), {
    kind: "lost",
    detail: "Connection closed",
  });
});

Deno.test("a connection error that is no certificate alert leaves a closed connection lost", () => {
  const reset = new NetworkError("Connection error", {
    cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", syscall: "read" }),
  });
  assert.equal(kafkaFailure(closed(), [reset])?.kind, "lost");
  // an alert explains a closed connection, not a broker's answer
  assert.equal(kafkaFailure(new Error("not the client's"), [alert()]), null);
});

Deno.test("an alert older than the client's retries explains nothing", () => {
  let now = 0;
  const errors = watchConnectionErrors(() => now);
  const client = new EventEmitter();
  errors.watch(client);
  const connection = new EventEmitter();
  client.emit("client:broker:connect", { connection });
  connection.emit("error", alert());
  now += 10 * 60_000;
  assert.deepEqual(errors.take(), []);
});
