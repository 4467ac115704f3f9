import { deepStrictEqual } from "node:assert/strict";
import { canonicalSha256 } from "./canonical.ts";
import { isSensitiveKey, REDACTED, redactForDisplay } from "./redact.ts";

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
