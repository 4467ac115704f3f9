import assert from "node:assert/strict";
import { exitCodeFor, SluiceError } from "../errors.ts";
import { openStateStore } from "./open.ts";

Deno.test("a key/value PostgreSQL DSN is named as such, exit 7, its value (a password) never shown", () => {
  const config = {
    backend: "postgres" as const,
    url: "host=db port=5432 user=app password=Hunter2Secret dbname=sluice",
    origin: { variable: "SLUICE_STATE_DSN" },
    project: "orders",
    environment: null,
  };
  assert.throws(
    () => openStateStore(config),
    (e) =>
      e instanceof SluiceError && e.code === "ENV_STATE_DSN_INVALID" &&
      exitCodeFor(e) === 7 && /key\/value connection string/.test(e.message) &&
      /\$SLUICE_STATE_DSN/.test(e.message) &&
      !JSON.stringify(e.toJSON()).includes("Hunter2Secret"),
  );
  // anything else that is no URL is named too; a URL opens (lazily: nothing connects)
  assert.throws(
    () => openStateStore({ ...config, url: "db.internal:5432" }),
    (e) => e instanceof SluiceError && /is not a postgres:\/\/ URL/.test(e.message),
  );
  const store = openStateStore({ ...config, url: "postgresql://app@db:5432/sluice" });
  return store.close();
});
