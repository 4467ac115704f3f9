import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert/strict";
import { readManifest } from "./manifest.ts";
import type { Manifest } from "./manifest.ts";
import { loadProject } from "./load.ts";
import { dockerEndpointProblem } from "./docker_security.ts";
import type { SettingsOverride } from "./settings_override.ts";
import { tempStarter } from "./_test_project.ts";
import { projectSourceSha256 } from "../plan/source_hash.ts";
import type { SluiceError } from "../errors.ts";

const IMAGE_A = `sha256:${"a".repeat(64)}`;
const IMAGE_B = `sha256:${"b".repeat(64)}`;

const TEXT = `project: orders
kafka:
  bootstrap_host: localhost:19092
  bootstrap_internal: kafka:9092
network: sluice-net
image: ${IMAGE_A}
initial_offsets: earliest
state:
  backend: local
sources:
  raw_orders:
    kind: managed
    partitions: 3
    schema:
      - { name: order_id, type: STRING }
models:
  m:
    sql: models/m.sql
    output: { topic: out }
environments:
  dev: {}
  prod:
    kafka:
      bootstrap_host: prod-kafka:9092
      bootstrap_internal: prod-kafka:9092
    network: prod-net
`;

function read(settings: SettingsOverride | undefined, environment = "prod") {
  return readManifest(TEXT, "sluice.yaml", { environment, settings });
}

function layered(settings: SettingsOverride, environment = "prod"): Manifest {
  const { manifest, errors } = read(settings, environment);
  if (!manifest) throw new Error(errors.map((e) => e.message).join("\n"));
  return manifest;
}

/** The one error of `code` the override gets, named by `path`, without a file location. */
function refused(settings: SettingsOverride, code: string, path: string): SluiceError {
  const { manifest, errors } = read(settings);
  strictEqual(manifest, null);
  const e = errors.find((x) => x.code === code);
  if (!e) throw new Error(`no ${code} in: ${errors.map((x) => x.message).join("\n")}`);
  strictEqual(e.message.startsWith(`${path}: `), true, e.message);
  strictEqual(e.evidence?.setting, path);
  strictEqual(e.location, undefined, "an override is named by key path, not file:line:col");
  return e;
}

Deno.test("an override is the last layer: over the top level and the environment's overlay", () => {
  const plain = layered({});
  strictEqual(plain.kafka.bootstrapHost, "prod-kafka:9092");
  strictEqual(plain.network, "prod-net");
  strictEqual(plain.override, undefined, "an empty override is none");

  const m = layered({
    kafka: { bootstrap_host: "127.0.0.1:29092" },
    image: IMAGE_B,
    state: { backend: "postgres", dsn_env: "CI_STATE_DSN" },
    docker: { endpoint: "tcp://127.0.0.1:2375" },
  });
  strictEqual(m.kafka.bootstrapHost, "127.0.0.1:29092");
  strictEqual(
    m.kafka.bootstrapInternal,
    "prod-kafka:9092",
    "an absent key keeps the environment's",
  );
  strictEqual(m.network, "prod-net");
  strictEqual(m.image, IMAGE_B);
  deepStrictEqual(m.state, { backend: "postgres", dsnEnv: "CI_STATE_DSN" });
  strictEqual(m.override?.dockerEndpoint, "tcp://127.0.0.1:2375");
  // an unreachable broker's error names where its address came from: the override's key
  deepStrictEqual(m.addressSources["kafka.bootstrap_host"], {
    setting: "settings.kafka.bootstrap_host",
  });
  deepStrictEqual(m.addressSources["state.dsn_env"], { setting: "settings.state.dsn_env" });
  strictEqual(
    m.addressSources["kafka.bootstrap_internal"]?.setting,
    "environments.prod.kafka.bootstrap_internal",
  );
  // the environment without an overlay gets it over the top level
  strictEqual(layered({ network: "ci-net" }, "dev").network, "ci-net");
});

Deno.test("an override's kafka.security replaces the manifest's whole, every secret by reference", () => {
  const m = layered({
    kafka: {
      security: {
        protocol: "SASL_SSL",
        admin: { sasl_mechanism: "SCRAM-SHA-512", username: "ci", password_env: "CI_ADMIN_PW" },
        runner: { sasl_mechanism: "SCRAM-SHA-512", username: "run", password_env: "CI_RUNNER_PW" },
      },
    },
  });
  strictEqual(m.kafkaSecurity.protocol, "SASL_SSL");
  deepStrictEqual(m.kafkaSecurity.admin?.sasl, {
    mechanism: "SCRAM-SHA-512",
    username: "ci",
    passwordEnv: "CI_ADMIN_PW",
  });
  deepStrictEqual(m.kafkaSecurity.tls, { caFileEnv: null, hostnameVerification: true });
});

Deno.test("an invalid override gets the manifest's diagnostics, named by its key path", () => {
  refused(
    { kafka: { bootstrap_host: "no port here" } },
    "MANIFEST_INVALID_VALUE",
    "settings.kafka.bootstrap_host",
  );
  refused({ network: "bad net!" }, "MANIFEST_INVALID_VALUE", "settings.network");
  refused({ image: "runner:latest" }, "MANIFEST_INVALID_IMAGE", "settings.image");
  refused(
    { state: { backend: "postgres", dsn_env: "postgres://u:p@h/db" } },
    "MANIFEST_INVALID_VALUE",
    "settings.state.dsn_env",
  );
  refused(
    { kafka: { security: { protocol: "SASL_TLS" } } },
    "MANIFEST_INVALID_VALUE",
    "settings.kafka.security.protocol",
  );
  refused(
    { docker: { endpoint: "ftp://docker" } },
    "MANIFEST_INVALID_VALUE",
    "settings.docker.endpoint",
  );
  // a key the override does not have (a typed caller cannot write it; a JavaScript one can)
  refused(
    { kafka: { bootstrap: "x:1" } } as unknown as SettingsOverride,
    "MANIFEST_UNKNOWN_KEY",
    "settings.kafka.bootstrap",
  );
  refused(
    { initial_offsets: "latest" } as unknown as SettingsOverride,
    "MANIFEST_UNKNOWN_KEY",
    "settings.initial_offsets",
  );
});

Deno.test("a literal secret in an override is refused at its key, its value never shown", () => {
  const e = refused(
    {
      kafka: {
        security: {
          protocol: "SASL_SSL",
          admin: { username: "ci", password: "hunter2-literal" } as never,
          runner: { sasl_mechanism: "PLAIN", username: "r", password_env: "R_PW" },
        },
      },
    },
    "MANIFEST_LITERAL_SECRET",
    "settings.kafka.security.admin.password",
  );
  strictEqual(JSON.stringify(e.toJSON()).includes("hunter2-literal"), false);
});

Deno.test("Docker endpoints: unix sockets and TCP/HTTP(S) daemons, nothing else", () => {
  for (const ok of ["unix:///var/run/docker.sock", "tcp://10.0.0.5:2375", "https://d:2376"]) {
    strictEqual(dockerEndpointProblem(ok), null, ok);
  }
  for (
    const bad of [
      "docker.sock",
      "unix://host/sock",
      "tcp://u:p@h:1",
      "http://h:1/v1.41",
      "tcp://h:1/?auth=x",
      "ftp://h:21",
      "tcp://:2375",
    ]
  ) {
    notStrictEqual(dockerEndpointProblem(bad), null, bad);
  }
});

Deno.test("the plan's source hash binds the override: none and {} alike, any other differs", async () => {
  const dir = await tempStarter();
  try {
    const hash = async (settings?: SettingsOverride) =>
      projectSourceSha256(await loadProject(dir, { settings }));
    const none = await hash();
    strictEqual(await hash({}), none);
    const a = await hash({ kafka: { bootstrap_host: "10.0.0.1:9092" } });
    notStrictEqual(a, none);
    strictEqual(await hash({ kafka: { bootstrap_host: "10.0.0.1:9092" } }), a);
    notStrictEqual(await hash({ kafka: { bootstrap_host: "10.0.0.2:9092" } }), a);
    notStrictEqual(await hash({ docker: { endpoint: "tcp://10.0.0.1:2375" } }), none);
    // a project loaded with an invalid override is refused whole, before any plan
    const bad = await loadProject(dir, { settings: { network: "!" } }).catch((e) => e);
    strictEqual(bad.code, "MANIFEST_INVALID_VALUE");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settings.docker.tls means what docker.tls in sluice.yaml means: three variables for a tcp:// or https:// endpoint", () => {
  const tls = { ca_file_env: "D_CA", cert_file_env: "D_CERT", key_file_env: "D_KEY" };
  const m = layered({ docker: { endpoint: "tcp://docker.ci:2376", tls } });
  deepStrictEqual(m.override?.dockerTls, {
    caFileEnv: "D_CA",
    certFileEnv: "D_CERT",
    keyFileEnv: "D_KEY",
  });
  strictEqual(m.override?.dockerEndpoint, "tcp://docker.ci:2376");
  // the same keys in sluice.yaml read to the same value
  const yaml = readManifest(
    TEXT.replace(
      "network: sluice-net\n",
      "network: sluice-net\ndocker:\n  endpoint: tcp://docker.ci:2376\n  tls:\n" +
        "    ca_file_env: D_CA\n    cert_file_env: D_CERT\n    key_file_env: D_KEY\n",
    ),
    "sluice.yaml",
    { environment: "prod" },
  );
  deepStrictEqual(yaml.manifest?.docker?.tls, m.override?.dockerTls);
  // without TLS the override has none
  strictEqual(layered({ docker: { endpoint: "tcp://docker.ci:2375" } }).override?.dockerTls, null);
});

Deno.test("settings.docker.tls is refused as sluice.yaml's is: on a socket, with a path, incomplete, or without an endpoint", () => {
  const tls = { ca_file_env: "D_CA", cert_file_env: "D_CERT", key_file_env: "D_KEY" };
  refused(
    { docker: { endpoint: "unix:///var/run/docker.sock", tls } },
    "MANIFEST_INVALID_VALUE",
    "settings.docker.tls",
  );
  const path = refused(
    { docker: { endpoint: "tcp://d:2376", tls: { ...tls, ca_file_env: "/etc/ca.pem" } } },
    "MANIFEST_INVALID_VALUE",
    "settings.docker.tls.ca_file_env",
  );
  strictEqual(/must name an environment variable/.test(path.message), true, path.message);
  const { key_file_env: _key, ...partial } = tls;
  refused(
    { docker: { endpoint: "tcp://d:2376", tls: partial as typeof tls } },
    "MANIFEST_MISSING_KEY",
    "settings.docker.tls",
  );
  const alone = refused({ docker: { tls } }, "MANIFEST_MISSING_KEY", "settings.docker.tls");
  strictEqual(/needs settings\.docker\.endpoint/.test(alone.message), true, alone.message);
});

Deno.test("the plan's source hash binds settings.docker.tls: other variables, another plan", async () => {
  const dir = await tempStarter();
  try {
    const hash = async (settings?: SettingsOverride) =>
      projectSourceSha256(await loadProject(dir, { settings }));
    const endpoint = "tcp://10.0.0.1:2376";
    const tls = { ca_file_env: "D_CA", cert_file_env: "D_CERT", key_file_env: "D_KEY" };
    const plain = await hash({ docker: { endpoint } });
    const secured = await hash({ docker: { endpoint, tls } });
    notStrictEqual(secured, plain);
    strictEqual(await hash({ docker: { endpoint, tls: { ...tls } } }), secured);
    notStrictEqual(
      await hash({ docker: { endpoint, tls: { ...tls, ca_file_env: "D_CA2" } } }),
      secured,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
