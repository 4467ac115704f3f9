import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { logTail, threadStacks } from "./log_tail.ts";

/** Feed `text` through a stream in uneven chunks, as Docker's log stream delivers it. */
async function feed(seen: ReturnType<typeof logTail>, text: string): Promise<void> {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 7) chunks.push(text.slice(i, i + 7));
  const stream = Readable.from(chunks);
  const ended = new Promise((r) => stream.on("end", r));
  seen.follow(stream);
  await ended;
}

const DUMP = [
  "Full thread dump OpenJDK 64-Bit Server VM (17.0.21.1+2-Debian mixed mode, sharing):",
  "",
  '"main" #1 prio=5 os_prio=0 cpu=1.2ms elapsed=60s tid=0x1 nid=0x2 waiting on condition',
  "   java.lang.Thread.State: WAITING (parking)",
  "\tat jdk.internal.misc.Unsafe.park(java.base@17/Native Method)",
  "\tat org.apache.kafka.connect.util.KafkaBasedLog.readToEnd(KafkaBasedLog.java:1)",
  "\tat org.apache.kafka.connect.util.KafkaBasedLog.start(KafkaBasedLog.java:2)",
  "",
  '"GC Thread#0" os_prio=0 cpu=3ms tid=0x3 nid=0x4 runnable',
  "",
  '"DistributedHerder-connect-1" #40 prio=5 tid=0x5 nid=0x6 runnable',
  "   java.lang.Thread.State: RUNNABLE",
  "\tat sun.nio.ch.EPoll.wait(java.base@17/Native Method)",
].join("\n");

Deno.test("the milestones come first and name how many matched, the tail keeps the last lines before a thread dump, and the dump shows only the named threads' first frames", async () => {
  const seen = logTail({
    keep: 2,
    notable: /WARN|started/,
    notableKeep: 2,
    threads: /^main$|Herder/,
    frames: 2,
  });
  const log = [
    "INFO worker initializing",
    "WARN first warning",
    "INFO REST server started",
    "WARN third notable line, not kept",
    "INFO reading the offsets topic",
    "INFO last line before the dump",
    DUMP,
  ].join("\n") + "\n";
  assert.equal(seen.dumped(), false);
  await feed(seen, log);
  assert.equal(seen.dumped(), true);
  const text = seen.text("w-1").split("\n");
  assert.deepEqual(text, [
    "milestones of w-1 (the first 2 of 3):",
    "WARN first warning",
    "INFO REST server started",
    "threads of w-1 matching /^main$|Herder/:",
    '"main" #1 prio=5 os_prio=0 cpu=1.2ms elapsed=60s tid=0x1 nid=0x2 waiting on condition',
    "   java.lang.Thread.State: WAITING (parking)",
    "\tat jdk.internal.misc.Unsafe.park(java.base@17/Native Method)",
    "\tat org.apache.kafka.connect.util.KafkaBasedLog.readToEnd(KafkaBasedLog.java:1)",
    '"DistributedHerder-connect-1" #40 prio=5 tid=0x5 nid=0x6 runnable',
    "   java.lang.Thread.State: RUNNABLE",
    "\tat sun.nio.ch.EPoll.wait(java.base@17/Native Method)",
    "last log lines of w-1:",
    "INFO reading the offsets topic",
    "INFO last line before the dump",
    "(log stream ended)",
  ]);
});

Deno.test("a partial last line is kept when the stream ends, a line too wide is cut, and without options the text is the last lines only", async () => {
  const seen = logTail({ keep: 2, notable: /x/ });
  await feed(seen, `a\nb\n${"x".repeat(400)}\nno newline`);
  const text = seen.text("c").split("\n");
  assert.equal(text[0], "milestones of c:");
  assert.equal(text[1], `${"x".repeat(300)}…`);
  assert.deepEqual(text.slice(2), [
    "last log lines of c:",
    `${"x".repeat(300)}…`,
    "no newline",
    "(log stream ended)",
  ]);
  const plain = logTail();
  assert.equal(plain.text("d"), "last log lines of d:\n(none)");
});

Deno.test("threadStacks keeps no thread when none is named and stops a thread's frames at the next header", () => {
  const dump = DUMP.split("\n").slice(1);
  assert.deepEqual(threadStacks(dump, /^nothing$/), []);
  assert.deepEqual(threadStacks(dump, /GC/, 5), [
    '"GC Thread#0" os_prio=0 cpu=3ms tid=0x3 nid=0x4 runnable',
  ]);
});
