/**
 * The pipeline project: the orders starter plus two Kafka Connect connectors — a FileStream
 * source that reads a file of JSON orders into the source topic, and a FileStream sink that
 * writes the model's output records to a file — written into a temporary directory and pointed
 * at an environment (real or fake). Used by the pipeline journey tests, the fake connector tests
 * and `./run demo --pipeline`.
 *
 * Both topics have one partition, so the sink file's lines come in a known order. The sink reads
 * with `read_committed`: the runner writes transactionally, so only committed output is written.
 *
 * @example
 * ```ts
 * import { pipelineProject } from "./pipeline.ts";
 * // const p = await pipelineProject(env, { image, connect: env.connect! });
 * // await Deno.writeTextFile(p.inputFileHost, lines.join("\n") + "\n");
 * ```
 * @module
 */
import { join } from "node:path";
import { initProject } from "../lib/project/starter.ts";

/** Where the project's Connect cluster is, and the directory its FileStream files live in. */
export interface PipelineConnect {
  restHost: string;
  restInternal: string;
  /** The directory as the worker sees it (FileStream `file=` settings point here). */
  dataDirContainer: string;
  /** The same directory on this host (null for a fake cluster: no file is read or written). */
  dataDirHost: string | null;
}

/** A pipeline project prepared for one case. */
export interface PipelineProject {
  dir: string;
  name: string;
  inputTopic: string;
  outputTopic: string;
  /** The connectors' names on the cluster. */
  sourceConnector: string;
  sinkConnector: string;
  /** The files on the host (null for a fake cluster). */
  inputFileHost: string | null;
  outputFileHost: string | null;
  /** Rewrite the model's WHERE clause. */
  setPredicate(sql: string): Promise<void>;
  /** Edit sluice.yaml text. */
  editManifest(edit: (text: string) => string): Promise<void>;
}

/** Options of {@link pipelineProject}. */
export interface PipelineOptions {
  image: string;
  connect: PipelineConnect;
  bootstrapHost: string;
  bootstrapInternal: string;
  network: string;
  /** A PostgreSQL state DSN variable instead of local state. */
  stateDsnEnv?: string;
  /**
   * Extra configuration of the sink connector, as YAML lines under its `config:` (e.g. a
   * secret reference).
   */
  sinkExtra?: Record<string, string>;
}

/** Write the pipeline project (see module docs). */
export async function pipelineProject(o: PipelineOptions): Promise<PipelineProject> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-pipeline-" });
  await initProject(dir);
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  const name = `pipe${suffix}`;
  const inputTopic = `raw_orders_${suffix}`;
  const outputTopic = `eligible_orders_${suffix}`;
  const { inputFile, outputFile } = pipelineFiles(name);
  const manifest = `${dir}/sluice.yaml`;
  let text = await Deno.readTextFile(manifest);
  text = text
    .replace(/^project: .*$/m, `project: ${name}`)
    .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${o.bootstrapHost}`)
    .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${o.bootstrapInternal}`)
    .replace(/^network: .*$/m, `network: ${o.network}`)
    .replace(/^image: .*$/m, `image: ${o.image}`)
    .replace(/^ {2}raw_orders:$/m, `  raw_orders:\n    topic: ${inputTopic}`)
    .replace(/partitions: 3/, "partitions: 1")
    .replace(/topic: eligible_orders$/m, `topic: ${outputTopic}`);
  if (o.stateDsnEnv) {
    text = text.replace(
      / {2}backend: local\n {2}dir: \.sluice\/state\n/,
      `  backend: postgres\n  dsn_env: ${o.stateDsnEnv}\n`,
    );
  }
  text += "\n" + connectorsSection({
    connect: o.connect,
    project: name,
    inputTopic,
    outputTopic,
    sinkExtra: o.sinkExtra,
  });
  await Deno.writeTextFile(manifest, text);
  const sqlPath = `${dir}/models/eligible_orders.sql`;
  const host = o.connect.dataDirHost;
  return {
    dir,
    name,
    inputTopic,
    outputTopic,
    sourceConnector: pipelineConnectorNames(name).source,
    sinkConnector: pipelineConnectorNames(name).sink,
    inputFileHost: host === null ? null : join(host, inputFile),
    outputFileHost: host === null ? null : join(host, outputFile),
    async setPredicate(sql: string) {
      const t = await Deno.readTextFile(sqlPath);
      await Deno.writeTextFile(sqlPath, t.replace(/WHERE .*$/m, `WHERE ${sql}`));
    },
    async editManifest(edit) {
      await Deno.writeTextFile(manifest, edit(await Deno.readTextFile(manifest)));
    },
  };
}

/** The FileStream files of a project's connectors, relative to the data directory. */
export function pipelineFiles(project: string): { inputFile: string; outputFile: string } {
  return { inputFile: `${project}-orders.jsonl`, outputFile: `${project}-eligible.jsonl` };
}

/** The names sluice gives a pipeline project's two connectors (`sluice-<project>-<connector>`). */
export function pipelineConnectorNames(project: string): { source: string; sink: string } {
  return { source: `sluice-${project}-orders_in`, sink: `sluice-${project}-orders_out` };
}

/**
 * The `connect:` and `connectors:` sections of a pipeline project, as YAML text to append to a
 * manifest: a FileStream source writing `inputTopic` and a FileStream sink reading
 * `outputTopic` (read_committed), on cluster `main`.
 */
export function connectorsSection(o: {
  connect: Pick<PipelineConnect, "restHost" | "restInternal" | "dataDirContainer">;
  project: string;
  inputTopic: string;
  outputTopic: string;
  sinkExtra?: Record<string, string>;
}): string {
  const { inputFile, outputFile } = pipelineFiles(o.project);
  const sinkExtra = Object.entries(o.sinkExtra ?? {})
    .map(([k, v]) => `      ${k}: ${JSON.stringify(v)}\n`).join("");
  return `# Kafka Connect: a file of orders in, the eligible orders out (docs/project-format.md)
connect:
  main:
    rest_host: ${o.connect.restHost}
    rest_internal: ${o.connect.restInternal}

connectors:
  orders_in:
    cluster: main
    kind: source
    class: org.apache.kafka.connect.file.FileStreamSourceConnector
    topics: [${o.inputTopic}]
    config:
      file: ${o.connect.dataDirContainer}/${inputFile}
      topic: ${o.inputTopic}
      tasks.max: 1
  orders_out:
    cluster: main
    kind: sink
    class: org.apache.kafka.connect.file.FileStreamSinkConnector
    topics: [${o.outputTopic}]
    config:
      file: ${o.connect.dataDirContainer}/${outputFile}
      tasks.max: 1
      consumer.override.isolation.level: read_committed
${sinkExtra}`;
}

/**
 * The manifest edit that removes the sink connector from `connectors:` and declares its
 * explicit removal under `lifecycle.connector_removals` (the only way sluice deletes one).
 */
export function declareSinkRemoved(p: Pick<PipelineProject, "sinkConnector">) {
  return (text: string): string => {
    const lines = text.split("\n");
    const at = lines.indexOf("  orders_out:");
    if (at < 0) throw new Error("the manifest declares no orders_out connector");
    // the entry is its key line and every following line indented deeper than it
    let end = at + 1;
    while (end < lines.length && /^ {3,}\S/.test(lines[end])) end++;
    lines.splice(at, end - at);
    return lines.join("\n") +
      `\nlifecycle:\n  connector_removals:\n    - logical_name: orders_out\n      connector: ${p.sinkConnector}\n      cluster: main\n`;
  };
}
