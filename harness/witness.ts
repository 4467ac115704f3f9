/**
 * Independent witnesses: each invariant read by a means other than sluice's own code path.
 *
 * - **Kafka's own tools**: group list, committed offsets, group members, topic IDs and the
 *   cluster ID from the Java admin tools of the broker image (`ConsumerGroupCommand`,
 *   `TopicCommand`, `ClusterTool`), run inside the broker container with `docker exec`, several
 *   in parallel, output parsed here.
 * - **The Docker Engine API, directly**: containers and volumes by HTTP over the daemon's unix
 *   socket (`DOCKER_HOST` or the default) — not dockerode, not `lib/providers/docker`, not the
 *   observer — and a volume's instance file read from the volume's mountpoint on the host.
 * - **The state, directly**: the local state files or the PostgreSQL rows parsed here (every
 *   sealed entry re-hashed), never through `lib/state` or `sluice state show`.
 *
 * @example
 * ```ts
 * import { dockerApi, kafkaTools, readStateFiles } from "./witness.ts";
 * // const groups = (await kafkaTools(brokerId, { listGroups: true })).groups;
 * // const version = await dockerApi().get("/version");
 * // const state = await readStateFiles(`${dir}/.sluice/state`, "orders");
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { dockerCli } from "./docker.ts";

// --- the Docker Engine API --------------------------------------------------------------------

/** A client of the Docker Engine HTTP API over a unix socket. */
export interface DockerApi {
  socket: string;
  /** GET `path` (e.g. `/containers/json?all=1`); throws on a non-2xx answer. */
  get(path: string): Promise<unknown>;
  /** GET that returns null on 404. */
  find(path: string): Promise<unknown | null>;
}

/** The daemon socket named by `DOCKER_HOST` (unix only) or the default one. */
export function dockerSocket(): string {
  const host = Deno.env.get("DOCKER_HOST");
  if (!host) return "/var/run/docker.sock";
  if (host.startsWith("unix://")) return host.slice("unix://".length);
  throw new Error(
    `witness: DOCKER_HOST=${host} is not a unix socket; the witness reads it directly`,
  );
}

const clients = new Map<string, DockerApi>();

/** The Engine API at `socket` (default: {@link dockerSocket}). */
export function dockerApi(socket: string = dockerSocket()): DockerApi {
  const known = clients.get(socket);
  if (known) return known;
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  const call = async (path: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`http://docker${path}`, {
      client,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const api: DockerApi = {
    socket,
    async get(path) {
      const r = await call(path);
      if (r.status < 200 || r.status > 299) {
        throw new Error(`Docker API GET ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      }
      return r.body;
    },
    async find(path) {
      const r = await call(path);
      if (r.status === 404) return null;
      if (r.status < 200 || r.status > 299) {
        throw new Error(`Docker API GET ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      }
      return r.body;
    },
  };
  clients.set(socket, api);
  return api;
}

/** A container as the Engine API reports it. */
export interface WitnessContainer {
  id: string;
  name: string;
  image: string;
  state: string;
  running: boolean;
  exit_code: number;
  oom_killed: boolean;
  labels: {
    application_id: string | null;
    operation: string | null;
    generation: string | null;
    artifact: string | null;
    volume_instance: string | null;
  };
  networks: string[];
}

interface InspectBody {
  Id: string;
  Name: string;
  Image: string;
  State: { Status: string; Running: boolean; ExitCode: number; OOMKilled: boolean };
  Config: { Labels: Record<string, string> | null };
  NetworkSettings: { Networks: Record<string, unknown> | null };
}

/** Every container (running or not) labelled with the application ID, by ID. */
export async function containersOf(
  applicationId: string,
  api: DockerApi = dockerApi(),
): Promise<WitnessContainer[]> {
  const filters = encodeURIComponent(
    JSON.stringify({ label: [`sluice.application-id=${applicationId}`] }),
  );
  const list = await api.get(`/containers/json?all=1&filters=${filters}`) as Array<{ Id: string }>;
  const out: WitnessContainer[] = [];
  for (const c of list) {
    const i = await api.find(`/containers/${c.Id}/json`) as InspectBody | null;
    if (!i) continue; // removed between list and inspect
    const l = i.Config.Labels ?? {};
    out.push({
      id: i.Id,
      name: i.Name.replace(/^\//, ""),
      image: i.Image,
      state: i.State.Status,
      running: i.State.Running,
      exit_code: i.State.ExitCode,
      oom_killed: i.State.OOMKilled,
      labels: {
        application_id: l["sluice.application-id"] ?? null,
        operation: l["sluice.operation-id"] ?? null,
        generation: l["sluice.generation"] ?? null,
        artifact: l["sluice.artifact-sha256"] ?? null,
        volume_instance: l["sluice.volume-instance"] ?? null,
      },
      networks: Object.keys(i.NetworkSettings.Networks ?? {}).sort(),
    });
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Every container (running or not) that mounts the volume `name`, by ID. */
export async function containersMounting(
  name: string,
  api: DockerApi = dockerApi(),
): Promise<Array<{ id: string; name: string; state: string; role: string | null }>> {
  const filters = encodeURIComponent(JSON.stringify({ volume: [name] }));
  const list = await api.get(`/containers/json?all=1&filters=${filters}`) as Array<
    { Id: string; Names: string[]; State: string; Labels: Record<string, string> | null }
  >;
  return list.map((c) => ({
    id: c.Id,
    name: (c.Names[0] ?? "").replace(/^\//, ""),
    state: c.State,
    role: c.Labels?.["sluice.role"] ?? null,
  })).sort((a, b) => a.id.localeCompare(b.id));
}

/** A state volume as the Engine API and the host filesystem report it. */
export interface WitnessVolume {
  exists: boolean;
  /** The `sluice.volume-instance` label. */
  label: string | null;
  /** The instance file read from the volume's mountpoint on the host. */
  file: string | null;
  /** How the file was read (`host-fs`), or why it was not. */
  read_via: string;
}

/** The volume's instance label and instance file (read under its mountpoint on this host). */
export async function volumeOf(
  name: string,
  api: DockerApi = dockerApi(),
  instanceFile = "instance-id",
): Promise<WitnessVolume> {
  const v = await api.find(`/volumes/${encodeURIComponent(name)}`) as
    | { Mountpoint: string; Labels: Record<string, string> | null }
    | null;
  if (!v) return { exists: false, label: null, file: null, read_via: "no volume" };
  let file: string | null = null;
  let via = "host-fs";
  try {
    file = (await Deno.readTextFile(`${v.Mountpoint}/${instanceFile}`)).trim();
  } catch (e) {
    via = `unreadable at ${v.Mountpoint}: ${e instanceof Error ? e.name : e}`;
  }
  return { exists: true, label: v.Labels?.["sluice.volume-instance"] ?? null, file, read_via: via };
}

// --- Kafka's own tools ------------------------------------------------------------------------

/** What to read with the broker's tools. */
export interface KafkaQuery {
  listGroups?: boolean;
  /** Committed offsets of `group` on `topic`. */
  offsets?: { group: string; topic: string };
  /** Active members of `group`. */
  members?: { group: string };
  /** Topic IDs of these topics. */
  topics?: string[];
  clusterId?: boolean;
}

/** What the broker's tools reported. */
export interface KafkaSnapshot {
  groups?: string[];
  /** partition → committed offset (decimal); partitions without a committed offset are absent. */
  offsets?: Record<string, string>;
  /** partition → log-end offset of the topic, as the same tool reports it. */
  log_end?: Record<string, string>;
  members?: Array<{ consumer_id: string; client_id: string; host: string; partitions: number }>;
  topic_ids?: Record<string, string>;
  cluster_id?: string;
  /** Tool errors (a missing group is not an error: its offsets and members are empty). */
  errors: string[];
}

const TOOL = {
  groups: "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
  topics: "org.apache.kafka.tools.TopicCommand",
  cluster: "org.apache.kafka.tools.ClusterTool",
} as const;

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Run the queried tools inside the broker container `broker` (in parallel, one JVM each) and
 * parse their output. The container's Kafka listens on `localhost:9092`.
 */
export async function kafkaTools(broker: string, q: KafkaQuery): Promise<KafkaSnapshot> {
  const jobs: Array<[string, string]> = [];
  const bs = "--bootstrap-server localhost:9092 --command-config /tmp/sluice-witness.properties";
  if (q.listGroups) jobs.push(["groups", `${TOOL.groups} ${bs} --list`]);
  if (q.offsets) {
    jobs.push([
      "offsets",
      `${TOOL.groups} ${bs} --describe --offsets --group ${shellQuote(q.offsets.group)}`,
    ]);
  }
  if (q.members) {
    jobs.push([
      "members",
      `${TOOL.groups} ${bs} --describe --members --group ${shellQuote(q.members.group)}`,
    ]);
  }
  if (q.topics && q.topics.length > 0) {
    const pattern = q.topics.map((t) => t.replace(/[.]/g, "\\.")).join("|");
    jobs.push(["topics", `${TOOL.topics} ${bs} --describe --topic ${shellQuote(pattern)}`]);
  }
  if (q.clusterId) {
    jobs.push(["cluster", `${TOOL.cluster} cluster-id --bootstrap-server localhost:9092`]);
  }
  const script = [
    "set -u",
    "printf 'request.timeout.ms=15000\\ndefault.api.timeout.ms=30000\\n' > /tmp/sluice-witness.properties",
    // each tool's classes are archived once per broker container (dynamic AppCDS): a later JVM
    // maps them instead of loading them, half the CPU of a witness (2.1 → 1.1 CPU-s measured);
    // one JVM writes the archive under a lock and renames it into place, the others run without
    "J() {",
    "  a=/tmp/sluice-witness-$1.jsa; cds=; made=",
    '  if [ -f "$a" ]; then cds="-XX:SharedArchiveFile=$a";',
    '  elif mkdir "$a.lock" 2>/dev/null; then cds="-XX:ArchiveClassesAtExit=$a.tmp"; made=1; fi',
    `  java -Xshare:auto -Xlog:cds*=off $cds -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m -Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.properties -cp '/opt/kafka/libs/*' "$@"`,
    "  rc=$?",
    '  if [ -n "$made" ] && [ -f "$a.tmp" ]; then mv "$a.tmp" "$a"; fi',
    "  return $rc",
    "}",
    "D=$(mktemp -d)",
    ...jobs.map(([k, cmd]) => `(J ${cmd} > $D/${k} 2>&1; echo $? > $D/${k}.rc) &`),
    "wait",
    ...jobs.map(([k]) => `echo "@@@ ${k} $(cat $D/${k}.rc)"; cat $D/${k}`),
    "rm -rf $D",
  ].join("\n");
  const child = new Deno.Command(dockerCli(), {
    args: ["exec", "-i", broker, "sh"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(script));
  await w.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(
      `witness: docker exec ${broker.slice(0, 12)} failed (${out.code}): ${
        new TextDecoder().decode(out.stderr).slice(0, 400)
      }`,
    );
  }
  return parseKafkaTools(text, q);
}

/** Parse the sectioned output of {@link kafkaTools} (exported for its unit test). */
export function parseKafkaTools(text: string, q: KafkaQuery): KafkaSnapshot {
  const sections = new Map<string, { rc: number; body: string[] }>();
  let cur: { rc: number; body: string[] } | null = null;
  for (const line of text.split("\n")) {
    const m = /^@@@ (\w+) (-?\d+)$/.exec(line);
    if (m) {
      cur = { rc: Number(m[2]), body: [] };
      sections.set(m[1], cur);
    } else if (cur) cur.body.push(line);
  }
  const snap: KafkaSnapshot = { errors: [] };
  const section = (k: string) => {
    const s = sections.get(k);
    if (!s) {
      snap.errors.push(`${k}: no output`);
      return null;
    }
    return s;
  };
  const missingGroup = (body: string[]) =>
    body.some((l) => /GroupIdNotFoundException|does not exist/.test(l));
  const toolError = (k: string, s: { rc: number; body: string[] }) => {
    const e = s.body.find((l) => /^Error|Exception/.test(l));
    if (s.rc !== 0 || e) snap.errors.push(`${k}: ${e ?? `exit ${s.rc}`}`);
  };
  if (q.listGroups) {
    const s = section("groups");
    if (s) {
      toolError("groups", s);
      snap.groups = s.body.map((l) => l.trim()).filter((l) =>
        l !== "" && !/^\[|^\s|WARN|ERROR|Exception|^\tat /.test(l)
      ).sort();
    }
  }
  if (q.offsets) {
    const s = section("offsets");
    if (s) {
      snap.offsets = {};
      snap.log_end = {};
      if (!missingGroup(s.body)) {
        toolError("offsets", s);
        for (const l of s.body) {
          const f = l.trim().split(/\s+/);
          if (f.length >= 5 && f[0] === q.offsets.group && f[1] === q.offsets.topic) {
            if (/^\d+$/.test(f[2]) && /^\d+$/.test(f[3])) snap.offsets[f[2]] = f[3];
            if (/^\d+$/.test(f[2]) && /^\d+$/.test(f[4])) snap.log_end[f[2]] = f[4];
          }
        }
      }
    }
  }
  if (q.members) {
    const s = section("members");
    if (s) {
      snap.members = [];
      if (!missingGroup(s.body)) {
        toolError("members", s);
        for (const l of s.body) {
          const f = l.trim().split(/\s+/);
          if (f.length >= 5 && f[0] === q.members.group && f[1] !== "CONSUMER-ID") {
            snap.members.push({
              consumer_id: f[1],
              host: f[2],
              client_id: f[3],
              partitions: Number(f[4]),
            });
          }
        }
      }
    }
  }
  if (q.topics && q.topics.length > 0) {
    const s = section("topics");
    if (s) {
      toolError("topics", s);
      snap.topic_ids = {};
      for (const l of s.body) {
        const m = /^Topic: (\S+)\s+TopicId: (\S+)/.exec(l);
        if (m && q.topics.includes(m[1])) snap.topic_ids[m[1]] = m[2];
      }
    }
  }
  if (q.clusterId) {
    const s = section("cluster");
    if (s) {
      toolError("cluster", s);
      const m = s.body.map((l) => /^Cluster ID: (\S+)/.exec(l)).find((x) => x);
      if (m) snap.cluster_id = m[1];
    }
  }
  return snap;
}

// --- the state, read directly -----------------------------------------------------------------

/** A completion receipt as the witness reads it. */
export interface WitnessReceipt {
  operation_id: string;
  incident_ids: string[];
  /** The clean-close vector of the terminal control's `old_closed` checkpoint. */
  close_offsets: Record<string, string> | null;
  checkpoints: string[];
  result_serial: number | null;
}

/** The state of one scope, read directly. */
export interface StateWitness {
  backend: "local" | "postgres";
  /** The documents present. */
  documents: string[];
  /** sha256 of each document's stored bytes (a file's bytes, a row's body). */
  digests: Record<string, string>;
  ownership: {
    serial: number;
    topics: Array<{ name: string; topic_id: string }>;
    runners: Array<{ application_id: string; artifact_sha256: string; volume_instance: string }>;
    /** The owned connectors (exact name and kind), sorted by name. */
    connectors: Array<{ name: string; kind: string }>;
    /** What a removed runner left owned: its application ID and its volume's instance. */
    retained: Array<{ application_id: string; volume_instance: string }>;
  } | null;
  control: {
    operation_id: string;
    status: string;
    checkpoints: string[];
    last_checkpoint: string | null;
    incidents: number;
    resumes: number;
  } | null;
  history: Array<{ kind: string; operation_id: string | null; incident_id: string | null }>;
  /** The operator's recorded decisions: the operation and each partition's lost range. */
  decisions: Array<{
    operation_id: string;
    decision: string;
    partitions: Array<{ partition: number; from: string; to: string }>;
  }>;
  receipts: WitnessReceipt[];
  /**
   * The day-two audit events (`record_skipped`, `runner_restarted`), in order: the event's ID,
   * the skipped record's coordinates, the restarted container and its exit code, the skip a
   * restart follows.
   */
  day_two: Array<{
    kind: string;
    event_id: string | null;
    record: { partition: number; offset: string } | null;
    container: { id: string; exit_code: number } | null;
    after_skip: string | null;
  }>;
  /** Sealed entries whose bytes do not hash to their recorded sha256 (should be none). */
  bad_seals: string[];
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Replace every sealed entry `{bytes, sha256}` by its parsed content, re-hashing its bytes. */
function unseal(v: unknown, path: string, bad: string[]): unknown {
  if (Array.isArray(v)) return v.map((x, i) => unseal(x, `${path}[${i}]`, bad));
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (
      keys.length === 2 && typeof o.bytes === "string" && typeof o.sha256 === "string"
    ) {
      if (sha256(o.bytes) !== o.sha256) bad.push(path);
      return unseal(JSON.parse(o.bytes), path, bad);
    }
    return Object.fromEntries(keys.map((k) => [k, unseal(o[k], `${path}.${k}`, bad)]));
  }
  return v;
}

type Doc = Record<string, unknown>;

function stateFrom(
  backend: "local" | "postgres",
  raw: Record<string, string>,
): StateWitness {
  const bad: string[] = [];
  const docs: Record<string, Doc> = {};
  for (const [name, text] of Object.entries(raw)) {
    const body = JSON.parse(text) as { document: Doc; sha256: string };
    docs[name] = unseal(body.document, name, bad) as Doc;
  }
  const o = docs.ownership;
  const c = docs.control;
  const h = docs.history;
  const events = (h?.events as Doc[] | undefined) ?? [];
  const receipts: WitnessReceipt[] = events.filter((e) => e.kind === "runner_completed").map(
    (e) => {
      const tc = e.terminal_control as Doc;
      const cps = (tc?.checkpoints as Doc[] | undefined) ?? [];
      const closed = cps.find((x) => x.name === "old_closed");
      const offsets = closed?.offsets as Array<{ partition: number; offset: string }> | undefined;
      return {
        operation_id: String(e.operation_id),
        incident_ids: ((e.incidents as Doc[] | undefined) ?? []).map((i) => String(i.incident_id)),
        close_offsets: offsets
          ? Object.fromEntries(
            [...offsets].sort((a, b) => a.partition - b.partition).map((x) => [
              String(x.partition),
              x.offset,
            ]),
          )
          : null,
        checkpoints: cps.map((x) => String(x.name)),
        result_serial: typeof e.result_serial === "number" ? e.result_serial : null,
      };
    },
  );
  const cps = (c?.checkpoints as Doc[] | undefined) ?? [];
  return {
    backend,
    documents: Object.keys(raw).sort(),
    digests: Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, sha256(v)])),
    ownership: o
      ? {
        serial: Number(o.serial),
        topics: ((o.topics as Doc[] | undefined) ?? []).map((t) => ({
          name: String(t.name),
          topic_id: String(t.topic_id),
        })),
        runners: ((o.runners as Doc[] | undefined) ?? []).map((r) => ({
          application_id: String(r.application_id),
          artifact_sha256: String(r.artifact_sha256),
          volume_instance: String((r.volume as Doc | undefined)?.instance_id),
        })),
        connectors: ((o.connectors as Doc[] | undefined) ?? []).map((x) => ({
          name: String(x.name),
          kind: String(x.kind),
        })),
        retained: ((o.retained as Doc[] | undefined) ?? []).map((r) => ({
          application_id: String(r.application_id),
          volume_instance: String((r.volume as Doc | undefined)?.instance_id),
        })),
      }
      : null,
    control: c
      ? {
        operation_id: String(c.operation_id),
        status: String(c.status),
        checkpoints: cps.map((x) => String(x.name)),
        last_checkpoint: cps.length > 0 ? String(cps[cps.length - 1].name) : null,
        incidents: ((c.incidents as unknown[] | undefined) ?? []).length,
        resumes: ((c.resume_history as unknown[] | undefined) ?? []).length,
      }
      : null,
    history: events.map((e) => ({
      kind: String(e.kind),
      operation_id: typeof e.operation_id === "string" ? e.operation_id : null,
      incident_id: typeof e.incident_id === "string" ? e.incident_id : null,
    })),
    decisions: events.filter((e) => e.kind === "operator_decision").map((e) => ({
      operation_id: String(e.operation_id),
      decision: String(e.decision),
      partitions: ((e.partitions as Doc[] | undefined) ?? []).map((x) => ({
        partition: Number(x.partition),
        from: String(x.from),
        to: String(x.to),
      })),
    })),
    receipts,
    day_two: events.filter((e) => e.kind === "record_skipped" || e.kind === "runner_restarted")
      .map((e) => {
        const r = e.record as Doc | undefined;
        const k = e.container as Doc | undefined;
        return {
          kind: String(e.kind),
          event_id: typeof e.event_id === "string" ? e.event_id : null,
          record: r ? { partition: Number(r.partition), offset: String(r.offset) } : null,
          container: k ? { id: String(k.id), exit_code: Number(k.exit_code) } : null,
          after_skip: typeof e.after_skip === "string" ? e.after_skip : null,
        };
      }),
    bad_seals: bad,
  };
}

const DOCUMENTS = ["ownership", "control", "history"] as const;

/** The scope's documents from the local state directory (`<dir>/<project>/*.json`). */
export async function readStateFiles(
  dir: string,
  project: string,
  environment: string | null = null,
): Promise<StateWitness> {
  const scope = environment ? `${dir}/${project}/environments/${environment}` : `${dir}/${project}`;
  const raw: Record<string, string> = {};
  for (const name of DOCUMENTS) {
    try {
      raw[name] = await Deno.readTextFile(`${scope}/${name}.json`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return stateFrom("local", raw);
}

/** The scope's rows from PostgreSQL (`<schema>.sluice_documents`), read with SQL. */
export async function readStateRows(
  url: string,
  project: string,
  environment: string | null = null,
  schema = "sluice",
): Promise<StateWitness> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`witness: bad schema name ${schema}`);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT name, body FROM "${schema}".sluice_documents WHERE scope = $1`,
      [JSON.stringify([project, environment])],
    );
    const raw: Record<string, string> = {};
    for (const row of r.rows as Array<{ name: string; body: string }>) raw[row.name] = row.body;
    return stateFrom("postgres", raw);
  } finally {
    await c.end();
  }
}
