// The port contracts against the fakes (no services): the same cases
// tests/ports_contract_docker_kafka_test.ts runs against the real daemon and broker (and
// tests/connect_contract_docker_kafka_test.ts against the real Connect worker).
import { DOCKER_CONTRACT } from "./docker_contract.ts";
import { KAFKA_CONTRACT } from "./kafka_contract.ts";
import { fakeConnectSubject, fakeSubject } from "./fake_subject.ts";
import { CONNECT_CONTRACT, registerConnectContract } from "./connect_contract.ts";
import { registerContract } from "./subject.ts";

registerContract("docker port contract (fake)", DOCKER_CONTRACT, () => fakeSubject());
registerContract("kafka port contract (fake)", KAFKA_CONTRACT, () => fakeSubject());
registerConnectContract("connect port contract (fake)", CONNECT_CONTRACT, fakeConnectSubject);
