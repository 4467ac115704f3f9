/**
 * Round-trip counters for the benchmarks: the counting wrappers of the ports and clients live
 * with the test support (`testing/ports/counting.ts`), where the no-mutation tests use them too.
 * @module
 */
export {
  countingDocker,
  countingKafka,
  countingPort,
  type PortSpan,
  sum,
} from "../testing/ports/counting.ts";
