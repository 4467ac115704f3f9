// test-needs: env
// Needs: Docker, the broker and the Connect worker (shared environment from tools/test.ts).
// The Connect port contract (testing/ports/connect_contract.ts) against the REST adapter on the
// real Kafka Connect 4.1.2 worker. The same cases run against the fake Connect cluster in
// testing/ports/fakes_contract_test.ts.
import { sharedEnv } from "../harness/env.ts";
import { createTopic } from "../harness/kafka.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import type { ConnectSubject } from "../testing/ports/connect_contract.ts";
import { CONNECT_CONTRACT, registerConnectContract } from "../testing/ports/connect_contract.ts";

function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function realConnectSubject(): Promise<ConnectSubject> {
  const env = await sharedEnv();
  const c = env.connect;
  if (!c) throw new Error("the shared environment has no Connect worker");
  const connect = restConnect(c.restHost);
  const prefix = `${env.runId}-cc${crypto.randomUUID().slice(0, 8)}`;
  let n = 0;
  const unique = (what: string) => `${prefix}-${what}-${++n}`;
  const made: string[] = [];
  const topic = async () => {
    const t = unique("topic");
    await createTopic(env.bootstrapHost, t, 1);
    return t;
  };
  return {
    kind: "real",
    connect: {
      ...connect,
      createConnector: (name, s) => (made.push(name), connect.createConnector(name, s)),
    },
    // a port nothing listens on (closed right after it was chosen)
    unreachable: restConnect(`http://127.0.0.1:${closedPort()}`, { requestTimeoutMs: 10_000 }),
    kafkaClusterId: env.clusterId,
    unique,
    sourceConfig: async () => ({
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      "tasks.max": "1",
      file: `${c.dataDirContainer}/${unique("in")}.jsonl`,
      topic: await topic(),
    }),
    sinkConfig: async () => ({
      "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
      "tasks.max": "1",
      file: `${c.dataDirContainer}/${unique("out")}.jsonl`,
      topics: await topic(),
    }),
    eventuallyMs: 120_000,
    async dispose() {
      for (const name of made) await connect.deleteConnector(name).catch(() => {});
    },
  };
}

registerConnectContract(
  "connect port contract (real)",
  CONNECT_CONTRACT,
  realConnectSubject,
  { sanitizeOps: false, sanitizeResources: false },
);
