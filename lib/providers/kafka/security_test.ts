import { notStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { resolveKafkaSecurity } from "./security.ts";
import type { KafkaSecurity } from "../../project/kafka_security.ts";

const SASL_SSL: KafkaSecurity = {
  protocol: "SASL_SSL",
  tls: { caFileEnv: "CA_FILE", hostnameVerification: true },
  admin: {
    sasl: { mechanism: "SCRAM-SHA-512", username: "sluice-admin", passwordEnv: "ADMIN_PW" },
    certificate: null,
  },
  runner: {
    sasl: { mechanism: "SCRAM-SHA-512", username: "runner", passwordEnv: "RUNNER_PW" },
    certificate: null,
  },
};

const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });

Deno.test("kafka security: each principal reads its own variable; the CA from the named path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, "-----BEGIN CERTIFICATE-----\nx\n");
    const vars = { CA_FILE: `${dir}/ca.pem`, ADMIN_PW: "a-secret", RUNNER_PW: "r-secret" };
    const admin = await resolveKafkaSecurity(SASL_SSL, "admin", env(vars));
    strictEqual(admin.sasl?.password, "a-secret");
    strictEqual(admin.sasl?.username, "sluice-admin");
    strictEqual(admin.tls?.ca, "-----BEGIN CERTIFICATE-----\nx\n");
    const runner = await resolveKafkaSecurity(SASL_SSL, "runner", env(vars));
    strictEqual(runner.sasl?.password, "r-secret");
    // the fingerprint never holds the secret, and changes with it
    strictEqual(admin.fingerprint.includes("a-secret"), false);
    const rotated = await resolveKafkaSecurity(SASL_SSL, "admin", env({ ...vars, ADMIN_PW: "b" }));
    notStrictEqual(rotated.fingerprint, admin.fingerprint);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kafka security: an unset variable or a missing file names the variable, never a value", async () => {
  await rejects(
    resolveKafkaSecurity(SASL_SSL, "admin", env({ CA_FILE: "/nonexistent/ca.pem" })),
    (e: Error & { code?: string }) =>
      e.code === "ENV_KAFKA_CREDENTIAL_MISSING" && /CA_FILE/.test(e.message) &&
      /no file/.test(e.message) && !e.message.includes("/nonexistent"),
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, "pem");
    await rejects(
      resolveKafkaSecurity(SASL_SSL, "admin", env({ CA_FILE: `${dir}/ca.pem`, ADMIN_PW: "" })),
      (e: Error & { code?: string }) =>
        e.code === "ENV_KAFKA_CREDENTIAL_MISSING" &&
        e.message.includes(
          "kafka.security.admin.password_env names the environment variable ADMIN_PW",
        ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
