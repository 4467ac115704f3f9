// test-needs: postgres
// Starts its own private PostgreSQL (harness/postgres.ts) with TLS and a password role; the
// certificates are made with openssl now (harness/tls_certs.ts), for `localhost` only.
import assert from "node:assert/strict";
import { exitCodeFor, type SluiceError } from "../../errors.ts";
import { startPrivatePostgres } from "../../../harness/postgres.ts";
import { makeTestPki } from "../../../harness/tls_certs.ts";
import { openStateStore } from "../open.ts";

const origin = { variable: "SLUICE_STATE_DSN", setting: "state.dsn_env" };

Deno.test("the PostgreSQL state over TLS with a password role: verify-full, an untrusted CA, another host name, a wrong password", async (t) => {
  const pki = await makeTestPki({ serverHosts: ["localhost"] });
  const server = await startPrivatePostgres({
    secure: { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile },
  });
  const password = server.login!.password;
  const dsn = (query: string, edit: (u: URL) => void = () => {}) => {
    const u = new URL(`${server.url}?${query}`);
    edit(u);
    return u.href;
  };
  const open = async (url: string) => {
    const store = openStateStore({
      backend: "postgres",
      url,
      origin,
      project: "orders",
      environment: null,
    });
    try {
      await store.init();
      return (await store.load()).revision;
    } finally {
      await store.close();
    }
  };
  const refused = (url: string) =>
    open(url).then(() => assert.fail("the store opened"), (e: SluiceError) => e);
  const shown = (e: SluiceError) => JSON.stringify({ m: e.message, j: e.toJSON() });
  try {
    await t.step(
      "verify-full with the CA that signed the server's certificate opens the store",
      async () => {
        const revision = await open(dsn(`sslmode=verify-full&sslrootcert=${pki.caFile}`));
        // the server takes TCP over TLS only (the last step shows it): the store is reached over TLS
        assert.equal(typeof revision, "string");
      },
    );

    await t.step(
      "a server certificate not signed by the CA given is ENV_POSTGRES_TLS, naming the host",
      async () => {
        const e = await refused(dsn(`sslmode=verify-full&sslrootcert=${pki.otherCaFile}`));
        assert.equal(e.code, "ENV_POSTGRES_TLS", e.message);
        assert.equal(exitCodeFor(e), 7);
        assert.match(
          e.message,
          new RegExp(
            `^PostgreSQL at postgres://localhost:${server.port}/sluice\\?schema=sluice ` +
              `\\(\\$SLUICE_STATE_DSN, named by state\\.dsn_env\\) failed the TLS handshake: `,
          ),
        );
        assert.ok(!shown(e).includes(password), "the password is never shown");
      },
    );

    await t.step(
      "verify-full refuses a certificate for another host name; verify-ca accepts it",
      async () => {
        const at127 = (u: URL) => void (u.hostname = "127.0.0.1");
        const e = await refused(dsn(`sslmode=verify-full&sslrootcert=${pki.caFile}`, at127));
        assert.equal(e.code, "ENV_POSTGRES_TLS", e.message);
        assert.match(e.message, /postgres:\/\/127\.0\.0\.1:\d+\/sluice/);
        assert.ok(!shown(e).includes(password), "the password is never shown");
        await open(dsn(`sslmode=verify-ca&sslrootcert=${pki.caFile}`, at127));
      },
    );

    await t.step("a wrong password is ENV_POSTGRES_DENIED, neither password shown", async () => {
      const e = await refused(
        dsn(`sslmode=verify-full&sslrootcert=${pki.caFile}`, (u) => void (u.password = "wr0ng-pw")),
      );
      assert.equal(e.code, "ENV_POSTGRES_DENIED", e.message);
      assert.equal(exitCodeFor(e), 7);
      assert.match(
        e.message,
        /password authentication failed for user "sluice" \(SQLSTATE 28P01\)/,
      );
      assert.ok(!shown(e).includes(password) && !shown(e).includes("wr0ng-pw"));
    });

    await t.step(
      "the CLI over verify-full: state show reads the store; an untrusted CA is exit 7, the password never printed",
      async () => {
        const bin = new URL("../../../bin/sluice", import.meta.url).pathname;
        const cli = async (url: string) => {
          const o = await new Deno.Command(bin, {
            args: ["-o", "json", "state", "show", "--pg-url", url, "--project-name", "orders"],
            stdout: "piped",
            stderr: "piped",
          }).output();
          const dec = new TextDecoder();
          return { code: o.code, stdout: dec.decode(o.stdout), stderr: dec.decode(o.stderr) };
        };
        const shownOk = await cli(dsn(`sslmode=verify-full&sslrootcert=${pki.caFile}`));
        assert.equal(shownOk.code, 0, shownOk.stdout + shownOk.stderr);
        const untrusted = await cli(dsn(`sslmode=verify-full&sslrootcert=${pki.otherCaFile}`));
        assert.equal(untrusted.code, 7, untrusted.stdout + untrusted.stderr);
        assert.equal(JSON.parse(untrusted.stdout).errors[0].code, "ENV_POSTGRES_TLS");
        for (const r of [shownOk, untrusted]) {
          assert.ok(!(r.stdout + r.stderr).includes(password), "the password is never printed");
        }
      },
    );

    await t.step(
      "sslmode=disable against a server that takes passwords over TLS only is ENV_POSTGRES_DENIED",
      async () => {
        const e = await refused(dsn("sslmode=disable"));
        assert.equal(e.code, "ENV_POSTGRES_DENIED", e.message);
        assert.match(e.message, /no encryption/);
      },
    );
  } finally {
    await server.stop();
    await pki.remove();
  }
});
