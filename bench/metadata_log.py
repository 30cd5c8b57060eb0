"""Write a large, realistic metadata log with quorumctl's own writer.

The mix follows a busy real cluster: mostly PartitionRecord and
PartitionChangeRecord, with TopicRecord, RemoveTopicRecord, RegisterBrokerRecord,
ConfigRecord and NoOpRecord; batches of a few to a few hundred records, epochs
increasing with a LeaderChange control batch at each new epoch.
Usage: python bench/metadata_log.py OUT_DIR [RECORDS]
"""

from __future__ import annotations

import os
import random
import sys

from quorumctl import ids
from quorumctl.records import metadata as md
from quorumctl.records.batch import encode_batch


def events(n: int, rng: random.Random):
    """Controller events, each one batch of metadata records (as the active
    controller appends them): topic creations (TopicRecord + its partitions),
    broker restarts (a burst of PartitionChangeRecords for the leaders it held),
    deletions, registrations, config changes, and the NoOpRecord heartbeats."""
    topics: list[tuple[str, str, int]] = []
    brokers = list(range(1, 7))
    dirs = {b: ids.random_uuid() for b in brokers}  # one log dir per broker, as in real clusters
    t = 0
    while t < n:
        r = rng.random()
        batch = []
        if r < 0.25 or len(topics) < 3:
            name = f"topic-{len(topics)}-{rng.randrange(1 << 30):x}"
            tid = ids.random_uuid()
            parts = rng.choice((1, 3, 6, 12, 24, 48))
            topics.append((name, tid, parts))
            batch.append(md.encode_metadata("TopicRecord", 0, {"name": name, "topicId": tid}))
            for p in range(parts):
                reps = rng.sample(brokers, 3)
                batch.append(
                    md.encode_metadata(
                        "PartitionRecord",
                        1,
                        {
                            "partitionId": p,
                            "topicId": tid,
                            "replicas": reps,
                            "isr": reps,
                            "removingReplicas": [],
                            "addingReplicas": [],
                            "leader": reps[0],
                            "leaderRecoveryState": 0,
                            "leaderEpoch": 0,
                            "partitionEpoch": 0,
                            "directories": [dirs[b] for b in reps],
                        },
                    )
                )
        elif r < 0.55:
            # a broker restart moves leadership and shrinks ISRs of many partitions at once
            for _ in range(rng.randrange(20, 400)):
                name, tid, parts = rng.choice(topics)
                reps = rng.sample(brokers, 3)
                batch.append(
                    md.encode_metadata(
                        "PartitionChangeRecord",
                        1,
                        {"partitionId": rng.randrange(parts), "topicId": tid, "leader": reps[0], "isr": reps[:2]},
                    )
                )
        elif r < 0.58:
            name, tid, parts = topics.pop(rng.randrange(len(topics)))
            batch.append(md.encode_metadata("RemoveTopicRecord", 0, {"topicId": tid}))
        elif r < 0.60:
            b = rng.choice(brokers)
            batch.append(
                md.encode_metadata(
                    "RegisterBrokerRecord",
                    3,
                    {
                        "brokerId": b,
                        "isMigratingZkBroker": False,
                        "incarnationId": ids.random_uuid(),
                        "brokerEpoch": t,
                        "endPoints": [
                            {"name": "PLAINTEXT", "host": f"broker-{b}.kafka.svc", "port": 9092, "securityProtocol": 0}
                        ],
                        "features": [{"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 21}],
                        "rack": None,
                        "fenced": True,
                        "inControlledShutdown": False,
                        "logDirs": [dirs[b]],
                    },
                )
            )
        elif r < 0.65:
            batch.append(
                md.encode_metadata(
                    "ConfigRecord",
                    0,
                    {
                        "resourceType": 2,
                        "resourceName": rng.choice(topics)[0],
                        "name": "retention.ms",
                        "value": str(rng.randrange(1, 1 << 31)),
                    },
                )
            )
        else:
            batch.append(md.encode_metadata("NoOpRecord", 0, {}))
        t += len(batch)
        yield batch


def write(out_dir: str, n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "00000000000000000000.log")
    offset, epoch, ts = 0, 1, 1_700_000_000_000
    with open(path, "wb") as f:
        key, value = md.encode_control(
            md.LEADER_CHANGE,
            {
                "version": 0,
                "leaderId": 1,
                "voters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
                "grantingVoters": [{"voterId": 1}, {"voterId": 2}],
            },
        )
        f.write(encode_batch([(key, value)], base_offset=0, leader_epoch=epoch, base_timestamp=ts, control=True))
        offset = 1
        for batch in events(n, rng):
            f.write(encode_batch([(None, v) for v in batch], base_offset=offset, leader_epoch=epoch, base_timestamp=ts))
            offset += len(batch)
            ts += rng.randrange(1, 500)
            if rng.random() < 0.001:  # a leader election: new epoch, LeaderChange first
                epoch += 1
                key, value = md.encode_control(
                    md.LEADER_CHANGE,
                    {
                        "version": 0,
                        "leaderId": 1 + epoch % 3,
                        "voters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
                        "grantingVoters": [{"voterId": 1 + epoch % 3}],
                    },
                )
                f.write(
                    encode_batch(
                        [(key, value)], base_offset=offset, leader_epoch=epoch, base_timestamp=ts, control=True
                    )
                )
                offset += 1
    return path


if __name__ == "__main__":
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_300_000
    p = write(out, n)
    print(p, os.path.getsize(p))
