// test-needs: postgres
// Needs the shared PostgreSQL (SLUICE_PG_URL) for the refusal; the unreachable cases need nothing.
import assert from "node:assert/strict";
import type { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { closedPort } from "../../../testing/net.ts";
import { PG_URL } from "../../../testing/state/pg_env.ts";
import { PgPrimitive } from "./pg_primitive.ts";

const origin = {
  variable: "SLUICE_STATE_DSN",
  setting: "state.dsn_env",
  location: { file: "/p/sluice.yaml", line: 21, column: 12 },
};

async function initFailure(url: string): Promise<SluiceError> {
  const p = new PgPrimitive({ url, origin, project: "orders", environment: null });
  try {
    return await p.init().then(() => assert.fail("init succeeded"), (e: SluiceError) => e);
  } finally {
    await p.close();
  }
}

Deno.test("a refused PostgreSQL is ENV_POSTGRES_UNREACHABLE: the redacted address, the DSN variable and where it is named", async () => {
  const port = await closedPort();
  const e = await initFailure(`postgres://sluice:s3cret-pw@127.0.0.1:${port}/postgres`);
  assert.equal(e.code, "ENV_POSTGRES_UNREACHABLE");
  assert.equal(exitCodeFor(e), 7);
  assert.equal(
    e.message,
    `PostgreSQL at postgres://127.0.0.1:${port}/postgres?schema=sluice ($SLUICE_STATE_DSN, named by ` +
      `state.dsn_env at /p/sluice.yaml:21:12) is unreachable: connection refused by 127.0.0.1:${port}; ` +
      "start PostgreSQL, or correct $SLUICE_STATE_DSN if the address is wrong",
  );
  assert.deepEqual(e.location, origin.location);
  assert.ok(!JSON.stringify(e.toJSON()).includes("s3cret-pw"), "the password is never shown");
  const unknownHost = await initFailure("postgres://sluice@no-such-host.invalid:5432/postgres");
  assert.equal(unknownHost.code, "ENV_POSTGRES_UNREACHABLE");
  assert.match(unknownHost.message, /the host name does not resolve/);
});

Deno.test("a PostgreSQL that refuses the database or the role is ENV_POSTGRES_DENIED (exit 7)", async () => {
  const url = new URL(PG_URL);
  url.pathname = "/sluice_no_such_database";
  const database = await initFailure(url.href);
  assert.equal(database.code, "ENV_POSTGRES_DENIED");
  assert.equal(exitCodeFor(database), 7);
  assert.match(
    database.message,
    /denied access: database "sluice_no_such_database" does not exist \(SQLSTATE 3D000\)/,
  );
  const role = new URL(PG_URL);
  role.username = "sluice_no_such_role";
  const denied = await initFailure(role.href);
  assert.equal(denied.code, "ENV_POSTGRES_DENIED");
  assert.match(denied.message, /SQLSTATE 28/);
});
