/**
 * `sluice skip-record MODEL --partition P --offset O --reason TEXT`: past a record the runner
 * cannot decode. Under `on_invalid: stop` such a record stops the runner (exit 13) with the
 * group's committed offset kept at it, so every start stops there again; this is the explicit,
 * audited way past it.
 *
 * Under the deployment lock, with no pending operation, only when:
 *
 * 1. the model's runner is exactly the owned generation (as `restart` checks it) and stopped on a
 *    decode failure whose status file names the record (`BLOCKED_NOT_DECODE_FAILURE` otherwise);
 * 2. `--partition` and `--offset` are that record's (`BLOCKED_SKIP_MISMATCH`): the operator names
 *    what they decided to skip, and it must be what the runner stopped at;
 * 3. the group is Empty (a member left by the failed runner is waited out, bounded);
 * 4. the group's committed offset of that partition is exactly the record's offset
 *    (`BLOCKED_OFFSETS_MOVED`): nothing moved it since the stop.
 *
 * Then: the `record_skipped` event (the record's topic, partition and offset, the runner's reason,
 * field and rule — never a value —, who and why) is recorded; THEN that one partition's committed
 * offset moves from `offset` to `offset + 1` (no other partition is touched); then the runner is
 * started again by `restart`'s own path (its `runner_restarted` event names the skip).
 *
 * Idempotent: the event names the container's exact stop, and the committed offset says whether
 * the move happened (`offset`: not yet; `offset + 1` with the event recorded: done), so a killed
 * run is finished by the same command, never moving twice.
 *
 * @example
 * ```ts
 * import { skipRecord } from "./skip_record.ts";
 * // await skipRecord({ dir: ".", model: "eligible_orders", partition: 1, offset: "9", reason: "test order with a string amount" });
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { atSite } from "../fault/site.ts";
import { dayTwoSite } from "../protocol/day_two.ts";
import type { RecordSkipped } from "../state/history.ts";
import { blocker, blockerError } from "../validation/blocker.ts";
import { runnerStopOf } from "../validation/runner_stop.ts";
import { isoNow } from "./deps.ts";
import type { OperationEvents } from "./progress.ts";
import {
  dayTwoEvents,
  type DayTwoRequest,
  eventsOfStop,
  observeOwned,
  requireReason,
  restartObserved,
  type RestartResult,
  stoppedContainer,
  underLock,
  waitGroupEmpty,
} from "./restart.ts";
import { openSession } from "./session.ts";
import { providerMutation } from "./provider_mutation.ts";

/** Options of {@link skipRecord}. */
export interface SkipRecordRequest extends DayTwoRequest {
  /** The failing record's partition, as `sluice status` names it. */
  partition: number;
  /** The failing record's offset (decimal), as `sluice status` names it. */
  offset: string;
}

/** What {@link skipRecord} did. */
export interface SkipRecordResult {
  /** The model. */
  model: string;
  /** The skipped record's coordinates. */
  record: { topic: string; partition: number; offset: string };
  /** The runner's reason, field and rule (never a value). */
  failure: { reason: string; field: string | null; rule: string | null };
  /** The `record_skipped` audit event. */
  event_id: string;
  /** False when an earlier run had recorded it. */
  recorded_now: boolean;
  /** False when an earlier run had moved the offset. */
  moved_now: boolean;
  /** The partition's committed offset now (`offset + 1`). */
  committed: string;
  /** The restart that followed. */
  restart: RestartResult;
}

/**
 * Skip the record the runner stopped at, then start it again (see the module documentation).
 *
 * @example
 * ```ts
 * import { skipRecord } from "./skip_record.ts";
 * // const r = await skipRecord({ dir: ".", model: "eligible_orders", partition: 0, offset: "41", reason: "…" });
 * ```
 */
export async function skipRecord(options: SkipRecordRequest): Promise<SkipRecordResult> {
  requireReason(options.reason, "skip-record");
  if (!Number.isSafeInteger(options.partition) || options.partition < 0) {
    throw new SluiceError(
      "USAGE_PARTITION",
      `--partition takes a partition number, found '${options.partition}'`,
    );
  }
  if (!/^(0|[1-9][0-9]*)$/.test(options.offset)) {
    throw new SluiceError(
      "USAGE_OFFSET",
      `--offset takes a record offset, found '${options.offset}'`,
    );
  }
  await using p = await openSession(options);
  return await underLock(p, options, async (snapshot) => {
    let snap = snapshot;
    // a set: the lowest-index instance stopped at the record named
    const choice = { decodeAt: { partition: options.partition, offset: options.offset } };
    let o = await observeOwned(p, snap, options.model, choice);
    // a set's instance is read and started on its own endpoint
    const ports = o.set?.at ?? p;
    const c = o.container;
    const model = o.model;
    const appId = o.owned.application_id;
    const { restarted, skipped } = eventsOfStop(snap.history.events, c);
    // the run of this skip (its operation ID is its audit event's; `continued`: an earlier run
    // recorded the skip of this stop)
    const within = <T>(
      id: string,
      continued: boolean,
      body: (e: OperationEvents) => Promise<T>,
    ) => {
      const events = dayTwoEvents(
        p,
        options,
        "skip_record",
        id,
        `sluice skip-record ${model} --partition ${options.partition} --offset ${options.offset} --reason TEXT`,
      );
      return events.run(() => {
        events.started(
          continued,
          continued
            ? `skip ${id} of ${c.name}'s record continues (recorded by an earlier run)`
            : `skip of the record ${c.name} stopped at`,
        );
        return body(events);
      });
    };
    if (c.running) {
      if (skipped && restarted?.after_skip === skipped.event_id) {
        // an earlier run skipped, moved and started: done (restart's path says so, read-only)
        return await within(skipped.event_id, true, async (events) =>
          done(
            skipped,
            false,
            false,
            skipped.record.offset,
            await restartObserved(ports, snap, o, options, events),
          ));
      }
      throw blockerError([notDecode(model, `container ${c.name} is running`)]);
    }
    const stop = runnerStopOf(c);
    const rec = stop?.kind === "decode" ? stop.runner?.record ?? null : null;
    if (!stop || !rec) {
      throw blockerError([notDecode(
        model,
        `container ${c.name} stopped with ${stop?.summary ?? `status ${c.status}`}${
          stop?.kind === "decode"
            ? " and its status file does not name the record ('sluice logs')"
            : ""
        }`,
      )]);
    }
    if (rec.partition !== options.partition || String(rec.offset) !== options.offset) {
      throw blockerError([blocker(
        "BLOCKED_SKIP_MISMATCH",
        `the runner stopped at ${rec.topic}-${rec.partition}@${rec.offset}, not at partition ${options.partition} offset ${options.offset}: only the record it stopped at can be skipped ('sluice status' names it)`,
        {
          model,
          evidence: {
            stopped_at: { topic: rec.topic, partition: rec.partition, offset: rec.offset },
            requested: { partition: options.partition, offset: options.offset },
          },
        },
      )]);
    }
    const topic = rec.topic;
    const at = String(rec.offset);
    const next = (BigInt(rec.offset) + 1n).toString();
    const eventId = skipped?.event_id ?? p.uuids.uuid();
    // an earlier run recorded this skip and moved the offset: only the restart is left
    const moved = skipped !== null && o.obs.kafka.committed[String(rec.partition)] === next;
    if (o.set && o.set.othersRunning.length > 0 && !moved) {
      // the group's offset is moved only with the group empty: every instance stopped
      throw blockerError([blocker(
        "BLOCKED_GROUP_ACTIVE",
        `model ${model} runs as a set and instance${o.set.othersRunning.length === 1 ? "" : "s"} ${
          o.set.othersRunning.join(", ")
        } still run: a committed offset moves only while the group is empty, so every instance must be stopped (each stops at this record when its partition reaches it, or 'docker stop' it); then skip-record again, and 'sluice restart ${model}' each instance it leaves stopped`,
        { model, evidence: { running: o.set.othersRunning } },
      )]);
    }
    return await within(eventId, skipped !== null, async (events) => {
      await waitGroupEmpty(ports, o, options, events);
      const committedOf = async () =>
        (await p.kafka.committedOffsets(appId, topic)).get(rec.partition)?.toString() ?? null;
      const now = await committedOf();
      if (!(now === at || (skipped && now === next))) {
        throw blockerError([blocker(
          "BLOCKED_OFFSETS_MOVED",
          `the committed offset of ${topic}-${rec.partition} in group ${appId} is ${
            now ?? "absent"
          }, not ${at} (the record the runner stopped at)${
            skipped ? ` nor ${next} (past it)` : ""
          }: it was moved outside sluice while ${c.name} was stopped; put it back (kafka-consumer-groups --reset-offsets --to-offset ${at}) or find out who moved it`,
          { model, evidence: { topic, partition: rec.partition, expected: at, found: now } },
        )]);
      }
      let event = skipped;
      let recordedNow = false;
      if (!event) {
        event = {
          kind: "record_skipped",
          event_id: eventId,
          actor: p.actor,
          recorded_at: isoNow(p.clock),
          reason: options.reason,
          model,
          application_id: appId,
          container: stoppedContainer(c),
          record: { topic, partition: rec.partition, offset: at },
          failure: {
            reason: stop.runner!.reason,
            field: stop.runner!.field,
            rule: stop.runner!.rule,
          },
        };
        const e = event;
        snap = await atSite(dayTwoSite("record_skip"), () => p.store.recordAudit(snap, e));
        recordedNow = true;
        events.boundary({
          kind: "intent",
          boundary: "record_skip",
          message:
            `skip of ${topic}-${rec.partition}@${at} recorded in the audit (event ${eventId})`,
        });
      }
      let movedNow = false;
      if (now === at) {
        await providerMutation(
          p.store,
          dayTwoSite("advance_offset"),
          () => p.kafka.setGroupOffsets(appId, topic, new Map([[rec.partition, BigInt(next)]])),
        );
        movedNow = true;
        events.boundary({
          kind: "offsets_moved",
          partitions: 1,
          boundary: "advance_offset",
          message: `${topic}-${rec.partition}: committed offset ${at} → ${next} (record skipped)`,
        });
      }
      // the restart's own path, on a fresh observation (the committed offset moved)
      o = await observeOwned(p, snap, options.model, { instance: o.set?.instance, ...choice });
      const restart = await restartObserved(o.set?.at ?? p, snap, o, options, events);
      return done(event, recordedNow, movedNow, next, restart);
    });

    function done(
      e: RecordSkipped,
      recorded: boolean,
      moved: boolean,
      committed: string,
      r: RestartResult,
    ): SkipRecordResult {
      return {
        model,
        record: e.record,
        failure: e.failure,
        event_id: e.event_id,
        recorded_now: recorded,
        moved_now: moved,
        committed: r.committed[String(e.record.partition)] ?? committed,
        restart: r,
      };
    }
  });
}

function notDecode(model: string, found: string) {
  return blocker(
    "BLOCKED_NOT_DECODE_FAILURE",
    `${found}: skip-record moves past a record only when the runner is stopped on one it cannot decode (exit 13, 'sluice status' names it); for another stop see 'sluice restart ${model}'`,
    { model },
  );
}
