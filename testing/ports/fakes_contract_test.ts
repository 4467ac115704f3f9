// The port contracts against the fakes (no services): the same cases
// tests/ports_contract_docker_kafka_test.ts runs against the real daemon and broker.
import { DOCKER_CONTRACT } from "./docker_contract.ts";
import { KAFKA_CONTRACT } from "./kafka_contract.ts";
import { fakeSubject } from "./fake_subject.ts";
import { registerContract } from "./subject.ts";

registerContract("docker port contract (fake)", DOCKER_CONTRACT, () => fakeSubject());
registerContract("kafka port contract (fake)", KAFKA_CONTRACT, () => fakeSubject());
