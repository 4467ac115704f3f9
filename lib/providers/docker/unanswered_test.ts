// A daemon that accepts and never answers (stopped, hung, cut off): every call of the Docker port
// but the bounded waits fails within its bound with a precise code, instead of blocking. The
// daemon is a unix socket that accepts connections and says nothing.
import { match, strictEqual } from "node:assert/strict";
// @ts-types="npm:@types/dockerode@4.0.2"
import Docker from "npm:dockerode@5.0.1";
import { SluiceError } from "../../errors.ts";
import { dockerodePort } from "./dockerode.ts";
import { silentDaemon } from "../../../testing/silent_daemon.ts";

async function failure(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (error) {
    if (error instanceof SluiceError) return error;
    throw error;
  }
  throw new Error("the call answered");
}

Deno.test("an unanswered read is ENV_DOCKER_UNREACHABLE and an unanswered mutation UNKNOWN_OUTCOME_DOCKER, each within the bound", async () => {
  await using daemon = await silentDaemon();
  const docker = dockerodePort(new Docker({ socketPath: daemon.path }), {
    origin: { setting: "docker.endpoints.spare.endpoint" },
    callBoundMs: 200,
  });
  const read = await failure(docker.daemonId());
  strictEqual(read.code, "ENV_DOCKER_UNREACHABLE");
  match(read.message, /did not answer daemonId: no answer within 0\.2 s/);
  match(read.message, /docker\.endpoints\.spare\.endpoint/);
  const write = await failure(docker.startContainer("c0ffee"));
  strictEqual(write.code, "UNKNOWN_OUTCOME_DOCKER");
  match(write.message, /startContainer .*lost its response \(no answer within 0\.2 s\)/);
  match(write.message, /may or may not have been applied/);
  // a wait keeps its own bound: it ends as its caller asked, not as an error
  strictEqual(await docker.awaitExit("c0ffee", 300), "timeout");
});
