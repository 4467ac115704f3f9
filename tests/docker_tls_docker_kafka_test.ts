// test-needs: env
// Needs: root and dockerd (a private daemon of its own, harness/dockerd.ts, listening on TCP with
// TLS and verifying its clients: --tlsverify), the shared broker (observe reads Kafka). The
// certificates are made with openssl now (harness/tls_certs.ts). sluice reaches the daemon by
// the Docker CLI's variables (DOCKER_HOST=tcp://…, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) and by
// an endpoint given in code with its PEM material; an untrusted CA is ENV_DOCKER_TLS.
import assert from "node:assert/strict";
import Docker from "dockerode";
import { sharedEnv } from "../harness/env.ts";
import { startPrivateDocker, stopPrivateDocker } from "../harness/dockerd.ts";
import { makeTestPki } from "../harness/tls_certs.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { dockerAtEndpoint } from "../lib/providers/docker/endpoint.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { assertExit, sluiceJson } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "the Docker daemon over TCP+TLS: the Docker CLI's variables and an endpoint in code reach it; an untrusted CA is ENV_DOCKER_TLS",
  opts,
  async (t) => {
    const env = await sharedEnv();
    const pki = await makeTestPki();
    const d = await startPrivateDocker({
      tls: { caFile: pki.caFile, certFile: pki.serverCertFile, keyFile: pki.serverKeyFile },
    });
    const untrusted = await Deno.makeTempDir({ prefix: "sluice-untrusted-" });
    try {
      const tcp = d.tcp!;
      const port = new URL(tcp.replace(/^tcp:/, "http:")).port;
      const daemonId = await dockerodePort(new Docker({ socketPath: d.socket })).daemonId();
      const pem = {
        ca: await Deno.readTextFile(pki.caFile),
        cert: await Deno.readTextFile(pki.clientCertFile),
        key: await Deno.readTextFile(pki.clientKeyFile),
      };
      const p = await starterProject(env, { image: await runnerImageId() });
      const cli = { DOCKER_HOST: tcp, DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: pki.dir };

      await t.step(
        "an endpoint given in code with its CA and client certificate is the same daemon",
        async () => {
          const docker = await dockerAtEndpoint(tcp, "settings.docker.endpoint", pem);
          assert.equal(await docker.daemonId(), daemonId);
          assert.deepEqual(await docker.listContainers("sluice.project", p.name), []);
        },
      );

      await t.step(
        "sluice observe over DOCKER_HOST=tcp://, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH",
        async () => {
          const observed = await sluiceJson(["observe", "--project", p.dir], cli);
          assertExit(observed, 0);
          assert.ok(
            observed.stdout.includes(daemonId),
            `the observation names the TLS daemon ${daemonId}:\n${observed.stdout}`,
          );
        },
      );

      await t.step(
        "docker: in sluice.yaml names the endpoint and the variables holding the TLS files",
        async () => {
          const manifest = `${p.dir}/sluice.yaml`;
          const before = await Deno.readTextFile(manifest);
          await Deno.writeTextFile(
            manifest,
            before + `docker:\n  endpoint: ${tcp}\n  tls:\n    ca_file_env: T_DOCKER_CA\n` +
              "    cert_file_env: T_DOCKER_CERT\n    key_file_env: T_DOCKER_KEY\n",
          );
          try {
            const files = {
              T_DOCKER_CA: pki.caFile,
              T_DOCKER_CERT: pki.clientCertFile,
              T_DOCKER_KEY: pki.clientKeyFile,
            };
            const observed = await sluiceJson(["observe", "--project", p.dir], files);
            assertExit(observed, 0);
            assert.ok(observed.stdout.includes(daemonId), observed.stdout);
            const untrusted = await sluiceJson(["observe", "--project", p.dir], {
              ...files,
              T_DOCKER_CA: pki.otherCaFile,
            });
            assertExit(untrusted, 7);
            const e = untrusted.envelope.errors[0];
            assert.equal(e.code, "ENV_DOCKER_TLS", untrusted.stdout);
            assert.match(
              e.message,
              /\(docker\.endpoint at .*sluice\.yaml:\d+:\d+\) failed the TLS/,
            );
          } finally {
            await Deno.writeTextFile(manifest, before);
          }
        },
      );

      await t.step(
        "a CA that did not sign the daemon's certificate is ENV_DOCKER_TLS (exit 7) naming the daemon",
        async () => {
          await Deno.copyFile(pki.otherCaFile, `${untrusted}/ca.pem`);
          await Deno.copyFile(pki.clientCertFile, `${untrusted}/cert.pem`);
          await Deno.copyFile(pki.clientKeyFile, `${untrusted}/key.pem`);
          const refused = await sluiceJson(["observe", "--project", p.dir], {
            ...cli,
            DOCKER_CERT_PATH: untrusted,
          });
          assertExit(refused, 7);
          const e = refused.envelope.errors[0];
          assert.equal(e.code, "ENV_DOCKER_TLS", refused.stdout);
          assert.match(
            e.message,
            new RegExp(
              `^Docker at https://localhost:${port} \\(\\$DOCKER_HOST\\) failed the TLS handshake`,
            ),
          );
        },
      );

      await t.step(
        "a missing client key is ENV_DOCKER_TLS_MISSING before any connection",
        async () => {
          await Deno.remove(`${untrusted}/key.pem`);
          const missing = await sluiceJson(["observe", "--project", p.dir], {
            ...cli,
            DOCKER_CERT_PATH: untrusted,
          });
          assertExit(missing, 7);
          assert.equal(missing.envelope.errors[0].code, "ENV_DOCKER_TLS_MISSING", missing.stdout);
          assert.match(missing.envelope.errors[0].message, /needs key\.pem in \$DOCKER_CERT_PATH/);
        },
      );
    } finally {
      await stopPrivateDocker(d);
      await pki.remove();
      await Deno.remove(untrusted, { recursive: true }).catch(() => {});
    }
  },
);
