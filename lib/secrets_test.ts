import assert from "node:assert/strict";
import { isSensitiveKey, maskSecrets, maskSqlSecrets } from "./secrets.ts";

Deno.test("secret-looking field names, case-insensitively", () => {
  for (const k of ["sasl_password", "API_TOKEN", "client_secret", "db.credentials", "apiKey"]) {
    assert.ok(isSensitiveKey(k), k);
  }
  for (const k of ["bootstrap_host", "topic", "amount"]) assert.ok(!isSensitiveKey(k), k);
});

Deno.test("maskSecrets masks each secret value character for character and nothing else", () => {
  const cases: Array<[string, string]> = [
    ["  sasl_password: hunter2", "  sasl_password: *******"],
    ['  "api_token": "abc", user: bob', '  "api_token": "***", user: bob'],
    ["{password: pw1, host: h}", "{password: ***, host: h}"],
    ["bootstrap_host: app:s3cret@kafka:9092", "bootstrap_host: **********@kafka:9092"],
    ["x.conn: postgres://u:pw@db/x", "x.conn: postgres://****@db/x"],
    [
      "url: jdbc:postgresql://db/x?user=u&password=pw9",
      "url: jdbc:postgresql://db/x?user=u&password=***",
    ],
    ["jdbc:sqlserver://db;user=u;password=pw9;", "jdbc:sqlserver://db;user=u;password=***;"],
    ["DB_PASSWORD=hunter2 PATH=/bin", "DB_PASSWORD=******* PATH=/bin"],
    ["WHERE api_token = 'abc' AND amount >= 100", "WHERE api_token = '***' AND amount >= 100"],
    ["  env: {DB_URL: x1, MODE: fast}", "  env: {DB_URL: **, MODE: ****}"],
    [
      "    env:\n      A: one\n      B: two\n    sql: m.sql",
      "    env:\n      A: ***\n      B: ***\n    sql: m.sql",
    ],
    ["mail: ops@example.com, topic: raw", "mail: ops@example.com, topic: raw"],
  ];
  for (const [input, want] of cases) {
    const got = maskSecrets(input);
    assert.equal(got, want, input);
    assert.equal(got.length, input.length, `${input}: same columns`);
  }
});

Deno.test("maskSqlSecrets masks every literal of SQL that names a secret-looking column", () => {
  const cases: Array<[string, string]> = [
    ["WHERE 'abc' = api_token", "WHERE '***' = api_token"],
    [
      "WHERE api_token IN ('ab', 'c''d') OR x = 'y'",
      "WHERE api_token IN ('**', '****') OR x = '*'",
    ],
    ["api_token LIKE 'ab%' AND", "api_token LIKE '***' AND"],
    ["WHERE api_token IN (\n  'ab',\n  'cd')", "WHERE api_token IN (\n  '**',\n  '**')"],
    // no secret-looking column outside the literals: nothing masked
    ["WHERE customer = 'api_token'", "WHERE customer = 'api_token'"],
  ];
  for (const [input, want] of cases) {
    const got = maskSqlSecrets(input);
    assert.equal(got, want, input);
    assert.equal(got.length, input.length, `${input}: same columns`);
  }
});
