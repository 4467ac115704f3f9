import { deepStrictEqual } from "node:assert/strict";
import { canonicalSha256 } from "./canonical.ts";
import {
  envFingerprint,
  isSensitiveKey,
  keyedHash,
  REDACTED,
  redactForDisplay,
  redactText,
} from "./redact.ts";

Deno.test("values of token/password/secret fields are hidden, case-insensitively", () => {
  const value = {
    user: "u",
    API_Token: "t",
    nested: [{ dbPassword: "p", client_secret: { a: 1 }, note: "keep" }],
    secret_absent: null,
  };
  deepStrictEqual(redactForDisplay(value), {
    user: "u",
    API_Token: REDACTED,
    nested: [{ dbPassword: REDACTED, client_secret: REDACTED, note: "keep" }],
    secret_absent: null,
  });
  deepStrictEqual(value.API_Token, "t"); // the input is untouched
});

Deno.test("redaction is for display: the checksum of the full content differs", () => {
  const value = { token: "abc" };
  deepStrictEqual(canonicalSha256(value) === canonicalSha256(redactForDisplay(value)), false);
});

Deno.test("isSensitiveKey matches substrings", () => {
  deepStrictEqual(["TOKEN", "passwords", "xSecRetx", "name", "tok"].map(isSensitiveKey), [
    true,
    true,
    true,
    false,
    false,
  ]);
});

Deno.test("literals compared with a secret-named column are hidden in a predicate AST", () => {
  const predicate = {
    kind: "and",
    args: [
      {
        kind: "compare",
        op: "=",
        left: { kind: "column", name: "card_token", type: "STRING" },
        right: { kind: "literal", type: "STRING", value: "tok_live_123" },
      },
      {
        kind: "in",
        arg: { kind: "column", name: "Password", type: "STRING" },
        list: [{ kind: "literal", type: "STRING", value: "hunter2" }, {
          kind: "literal",
          type: "NULL",
          value: null,
        }],
        negated: false,
      },
      {
        kind: "compare",
        op: ">=",
        left: { kind: "column", name: "amount", type: "BIGINT" },
        right: { kind: "literal", type: "BIGINT", value: "100" },
      },
    ],
  };
  const shown = redactForDisplay({ predicate });
  const text = JSON.stringify(shown);
  deepStrictEqual(/tok_live_123|hunter2/.test(text), false);
  deepStrictEqual(shown.predicate.args[2], predicate.args[2]); // other literals stay
  deepStrictEqual((shown.predicate.args[0] as { right: { value: string } }).right.value, REDACTED);
  // the schema field's name itself is not a secret
  deepStrictEqual(redactForDisplay({ schema: [{ name: "card_token", type: "STRING" }] }), {
    schema: [{ name: "card_token", type: "STRING" }],
  });
});

Deno.test("connection-string credentials and secret KEY=value assignments are removed from text", () => {
  deepStrictEqual(
    redactText("connect postgres://app:pw@db:5432/x?sslmode=disable then https://tok@h/p"),
    `connect postgres://${REDACTED}@db:5432/x?sslmode=disable then https://${REDACTED}@h/p`,
  );
  deepStrictEqual(
    redactText("env API_TOKEN=abc PATH=/usr/bin DB_PASSWORD=x1"),
    `env API_TOKEN=${REDACTED} PATH=/usr/bin DB_PASSWORD=${REDACTED}`,
  );
  deepStrictEqual(redactText("kafka://broker:9092 a=b"), "kafka://broker:9092 a=b");
  deepStrictEqual(redactForDisplay({ address: "postgres://u:p@h/db" }), {
    address: `postgres://${REDACTED}@h/db`,
  });
});

Deno.test("evidence text keeps fault-site markers and loses every other secret", () => {
  const text = "SLUICE_FAULT_FIRED journal.intent:before@1 via app:pw@db:5432";
  deepStrictEqual(redactText(text), `SLUICE_FAULT_FIRED ${REDACTED}@1 via ${REDACTED}@db:5432`);
  const evidence = redactText(
    `${text} postgres://u:pw@h/x API_TOKEN=abc {"password": "p"}`,
    { bareUserinfo: false },
  );
  deepStrictEqual(
    evidence,
    `${text} postgres://${REDACTED}@h/x API_TOKEN=${REDACTED} {"password": "${REDACTED}"}`,
  );
});

Deno.test("environment values become keyed hashes: equal within the process, never the value", () => {
  const a = envFingerprint("API_TOKEN=s3cr3t-value");
  deepStrictEqual(a.startsWith("API_TOKEN=hmac:"), true);
  deepStrictEqual(a.includes("s3cr3t"), false);
  deepStrictEqual(a, envFingerprint("API_TOKEN=s3cr3t-value"));
  deepStrictEqual(a === envFingerprint("API_TOKEN=other"), false);
  deepStrictEqual(keyedHash("x") === keyedHash("y"), false);
  deepStrictEqual(envFingerprint("BARE"), "BARE");
  // a value with '=' inside is one value
  deepStrictEqual(envFingerprint("K=a=b") === envFingerprint("K=a=c"), false);
});

Deno.test("a JSON document stays JSON: a secret-looking field is hidden inside its quotes, a reference is kept", () => {
  const doc = {
    config: {
      "x.api.token": "${env:SINK_TOKEN}",
      "db.password": 'pa"ss, word}',
      password: "hunter2",
      topic: "orders",
      secret_key_id: null,
      token_count: 12,
      has_secret: true,
    },
    items: [{ token: "abc,def" }],
  };
  for (const indent of [0, 2]) {
    const text = redactText(JSON.stringify(doc, null, indent));
    const back = JSON.parse(text);
    deepStrictEqual(back, {
      config: {
        "x.api.token": "${env:SINK_TOKEN}",
        "db.password": REDACTED,
        password: REDACTED,
        topic: "orders",
        secret_key_id: null,
        // a bare number is a YAML value only after `: ` (the indented form)
        token_count: indent === 0 ? 12 : REDACTED,
        has_secret: true,
      },
      items: [{ token: REDACTED }],
    });
  }
  // YAML keeps its quotes too
  deepStrictEqual(redactText(`sasl_password: 'x''y'`), `sasl_password: '${REDACTED}'`);
  deepStrictEqual(redactText(`  api_token: "abc"`), `  api_token: "${REDACTED}"`);
});
