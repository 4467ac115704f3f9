/**
 * The ports of a project handle, kept true to the project: before each online call the handle
 * reads the project (with its settings override) again and compares what each port was built
 * from — its fingerprint — with what the project says now:
 *
 * | port        | built from                                                                |
 * | ----------- | ------------------------------------------------------------------------- |
 * | Kafka       | `kafka.bootstrap_host`, `kafka.security`'s protocol, TLS trust and admin principal (the referenced variables' values included) |
 * | Docker      | `settings.docker.endpoint` and `.tls`, else `docker:` (endpoint, TLS), else `$DOCKER_HOST` (the TLS variables' values included) |
 * | state store | `state:` (a PostgreSQL DSN variable's value included), project, environment |
 *
 * A port the handle created whose fingerprint changed is closed and created again from the
 * project as it is now; a port the caller gave cannot be, so the call is refused with
 * `USAGE_STALE_PORTS` naming the port and the settings that changed (never a secret), and
 * nothing is done. A port is never used for settings other than those it was made for.
 *
 * @example
 * ```ts
 * import { HandlePorts } from "./ports.ts";
 * const ports = new HandlePorts({ dir: "./orders", environment: null, given: {} });
 * // const { kafka, docker, store } = await ports.current(); ...; await ports.close();
 * ```
 * @module
 */
import { resolve } from "node:path";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import { SluiceError } from "../errors.ts";
import { loadProject, type Project } from "../project/load.ts";
import type { Manifest } from "../project/manifest.ts";
import type { SettingsOverride } from "../project/settings_override.ts";
import type { KafkaPrincipal } from "../project/kafka_security.ts";
import type { DockerSettings } from "../project/docker_security.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import { projectDocker } from "../providers/docker/endpoint.ts";
import { projectKafka } from "../providers/real.ts";
import { type Clock, SYSTEM_CLOCK } from "../runtime/deps.ts";
import { type Logger, SILENT_LOGGER } from "../runtime/progress.ts";
import { projectStoreConfig } from "../runtime/state_store.ts";
import { openStateStore } from "../state/open.ts";
import type { StateStore } from "../state/store.ts";

/** The three ports a handle acts through. */
export interface PortSet {
  docker: DockerPort;
  kafka: KafkaPort;
  store: StateStore;
}

/** Which port. */
export type PortName = keyof PortSet;

/** How a handle makes the ports it is not given (default: the real adapters). */
export interface PortFactories {
  docker(manifest: Manifest): Promise<DockerPort>;
  kafka(manifest: Manifest): Promise<KafkaPort>;
  store(project: Project): StateStore;
}

/** What a handle's ports are for. */
export interface PortsSource {
  /** The project directory. */
  dir: string;
  environment: string | null;
  /** The settings override given in code. */
  settings?: SettingsOverride;
  /** The ports the caller gave: used as they are, never closed or rebuilt. */
  given: Partial<PortSet>;
  clock?: Clock;
  logger?: Logger;
  /** How variables are read (default: the process environment). */
  env?: (name: string) => string | undefined;
}

/**
 * What each port is built from, setting by setting (key path → value as shown, or a sha256 for
 * a variable's value, which is never shown).
 */
export type PortsFingerprint = Record<PortName, Record<string, string>>;

/**
 * The fingerprint of the ports a project's settings make ({@link HandlePorts}).
 *
 * @example
 * ```ts
 * import { portsFingerprint } from "./ports.ts";
 * // portsFingerprint(await loadProject("./orders")).kafka["kafka.bootstrap_host"]
 * ```
 */
export function portsFingerprint(
  project: Project,
  env: (name: string) => string | undefined = readEnv,
): PortsFingerprint {
  const m = project.manifest;
  const secret = (name: string | null | undefined) =>
    name ? `${name}=sha256:${sha256Hex(env(name) ?? "")}` : "";
  const principal = (p: KafkaPrincipal | null) =>
    p === null ? "" : canonicalJson({
      sasl: p.sasl && { ...p.sasl, password: secret(p.sasl.passwordEnv) },
      certificate: p.certificate && {
        cert: secret(p.certificate.certFileEnv),
        key: secret(p.certificate.keyFileEnv),
      },
    });
  const s = m.kafkaSecurity;
  const endpoint = m.override?.dockerEndpoint ?? null;
  const dockerTls = (where: string, tls: DockerSettings["tls"]): Record<string, string> =>
    tls === null ? {} : {
      [`${where}.tls`]: canonicalJson({
        ca: secret(tls.caFileEnv),
        cert: secret(tls.certFileEnv),
        key: secret(tls.keyFileEnv),
      }),
    };
  return {
    kafka: {
      "kafka.bootstrap_host": m.kafka.bootstrapHost,
      "kafka.security.protocol": s.protocol,
      "kafka.security.tls": s.tls === null ? "" : canonicalJson({
        ca: secret(s.tls.caFileEnv),
        hostnameVerification: s.tls.hostnameVerification,
      }),
      "kafka.security.admin": principal(s.admin),
    },
    docker: endpoint !== null
      ? {
        "settings.docker.endpoint": endpoint,
        ...dockerTls("settings.docker", m.override?.dockerTls ?? null),
      }
      : m.docker
      ? {
        [m.docker.endpointAt.setting]: m.docker.endpoint,
        ...dockerTls(m.docker.endpointAt.setting.replace(/\.endpoint$/, ""), m.docker.tls),
      }
      : { "$DOCKER_HOST": env("DOCKER_HOST") ?? "" },
    store: {
      "project": m.project,
      "environment": m.environment ?? "",
      "state.backend": m.state.backend,
      ...(m.state.backend === "local"
        ? { "state.dir": resolve(project.dir, m.state.dir) }
        : { "state.dsn_env": secret(m.state.dsnEnv) }),
    },
  };
}

/** The real adapters, the store stamped with `clock`. */
export function realFactories(clock: Clock = SYSTEM_CLOCK): PortFactories {
  return {
    docker: (manifest) => projectDocker(manifest),
    kafka: (manifest) => projectKafka(manifest),
    store: (project) =>
      openStateStore(projectStoreConfig(project), { clock: () => new Date(clock.now()) }),
  };
}

/** One port: what it is, whether the handle made it, and what it was made from. */
interface Held<T> {
  port: T;
  owned: boolean;
  /** The settings it was made from; null while the project could not be read. */
  from: Record<string, string> | null;
}

const PORT_NAMES: readonly PortName[] = ["store", "kafka", "docker"];

const DESCRIBED: Record<PortName, string> = {
  docker: "Docker",
  kafka: "Kafka",
  store: "state-store",
};

/** A handle's ports, created on first use and kept true to the project (module docs). */
export class HandlePorts {
  readonly #source: PortsSource;
  readonly #make: PortFactories;
  #held: { [K in PortName]?: Held<PortSet[K]> } = {};

  constructor(source: PortsSource, factories?: PortFactories) {
    this.#source = source;
    this.#make = factories ?? realFactories(source.clock);
  }

  /**
   * The ports for the project as it is now: each made on first use, each one the handle made
   * made again when its settings changed; `USAGE_STALE_PORTS` when a given one's changed.
   */
  async current(): Promise<PortSet> {
    const src = this.#source;
    const allGiven = PORT_NAMES.every((n) => src.given[n] !== undefined);
    let project: Project | null = null;
    try {
      project = await loadProject(src.dir, {
        environment: src.environment,
        settings: src.settings,
      });
    } catch (error) {
      // ports given whole need no project: the journey reports what it cannot read itself
      if (!allGiven) throw error;
    }
    const now = project ? portsFingerprint(project, src.env) : null;
    // refuse before anything is closed or made: a given port for other settings
    for (const name of PORT_NAMES) {
      const held = this.#held[name];
      if (!held || held.owned || !now || held.from === null) continue;
      const changed = changedSettings(held.from, now[name]);
      if (changed.length > 0) throw stale(name, changed);
    }
    for (const name of PORT_NAMES) {
      const held = this.#held[name];
      if (held && now) {
        if (held.from === null) held.from = now[name];
        else if (held.owned && changedSettings(held.from, now[name]).length > 0) {
          delete this.#held[name];
          await this.#closeOne(name, held);
        }
      }
      if (!this.#held[name]) await this.#make1(name, project, now);
    }
    return {
      docker: this.#held.docker!.port,
      kafka: this.#held.kafka!.port,
      store: this.#held.store!.port,
    };
  }

  /** Close the ports the handle made (a failure to close is a logged warning). */
  async close(): Promise<void> {
    const held = this.#held;
    this.#held = {};
    for (const name of PORT_NAMES) {
      const h = held[name];
      if (h?.owned) await this.#closeOne(name, h);
    }
  }

  async #make1(name: PortName, project: Project | null, now: PortsFingerprint | null) {
    const given = this.#source.given[name];
    const from = now ? now[name] : null;
    if (given !== undefined) {
      this.#held[name] = { port: given, owned: false, from } as Held<never>;
      return;
    }
    // not all ports are given, so the project was read (a failed read has thrown)
    const p = project!;
    const port = name === "store"
      ? this.#make.store(p)
      : name === "kafka"
      ? await this.#make.kafka(p.manifest)
      : await this.#make.docker(p.manifest);
    this.#held[name] = { port, owned: true, from } as Held<never>;
  }

  async #closeOne(name: PortName, held: Held<PortSet[PortName]>): Promise<void> {
    if (name === "docker") return; // the Docker port holds no connection to close
    try {
      await (held.port as KafkaPort | StateStore).close();
    } catch (error) {
      (this.#source.logger ?? SILENT_LOGGER).warn(
        `the ${DESCRIBED[name]} port did not close cleanly: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  }
}

/** The settings whose value differs (in either record). */
function changedSettings(before: Record<string, string>, now: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...keys].filter((k) => before[k] !== now[k]).sort();
}

function stale(name: PortName, changed: string[]): SluiceError {
  return new SluiceError(
    "USAGE_STALE_PORTS",
    `the ${DESCRIBED[name]} port given to this project handle was made for other settings: ` +
      `${changed.join(", ")} changed since its first call (in sluice.yaml or the settings ` +
      `override); nothing was done. Open a new handle with a ${DESCRIBED[name]} port for the ` +
      `project as it is now, or leave the port out and the handle makes (and remakes) its own`,
    { evidence: { port: name, changed } },
  );
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env: the variable reads as unset
  }
}
