"""Topic configs as a broker describes them (DescribeConfigs for a topic, which
`kafka-topics --describe` prints in its `Configs:` column): the topic config
names, each one's broker synonyms (Kafka's ServerTopicConfigSynonyms: the
first is the one whose source counts), and the source an effective value
comes from. Facts only; the image supplies the topic and cluster-level
dynamic configs, a server.properties the static ones.
"""

from __future__ import annotations

# topic config -> its broker synonyms, highest priority first (4.1 and 4.3 agree)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "segment.bytes": ("log.segment.bytes",),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
    "segment.jitter.ms": ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    "segment.index.bytes": ("log.index.size.max.bytes",),
    "flush.messages": ("log.flush.interval.messages",),
    "flush.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    "retention.bytes": ("log.retention.bytes",),
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "max.message.bytes": ("message.max.bytes",),
    "index.interval.bytes": ("log.index.interval.bytes",),
    "delete.retention.ms": ("log.cleaner.delete.retention.ms",),
    "min.compaction.lag.ms": ("log.cleaner.min.compaction.lag.ms",),
    "max.compaction.lag.ms": ("log.cleaner.max.compaction.lag.ms",),
    "file.delete.delay.ms": ("log.segment.delete.delay.ms",),
    "min.cleanable.dirty.ratio": ("log.cleaner.min.cleanable.ratio",),
    "cleanup.policy": ("log.cleanup.policy",),
    "unclean.leader.election.enable": ("unclean.leader.election.enable",),
    "min.insync.replicas": ("min.insync.replicas",),
    "compression.type": ("compression.type",),
    "compression.gzip.level": ("compression.gzip.level",),
    "compression.lz4.level": ("compression.lz4.level",),
    "compression.zstd.level": ("compression.zstd.level",),
    "preallocate": ("log.preallocate",),
    "message.timestamp.type": ("log.message.timestamp.type",),
    "message.timestamp.before.max.ms": ("log.message.timestamp.before.max.ms",),
    "message.timestamp.after.max.ms": ("log.message.timestamp.after.max.ms",),
    "local.retention.ms": ("log.local.retention.ms",),
    "local.retention.bytes": ("log.local.retention.bytes",),
}

# every config a broker describes for a topic, in the order LogConfig defines them (4.1 and
# 4.3: 33); the order breaks ties between configs in one bucket of the describe's HashMaps
NAMES: tuple[str, ...] = (
    "segment.bytes",
    "segment.ms",
    "segment.jitter.ms",
    "segment.index.bytes",
    "flush.messages",
    "flush.ms",
    "retention.bytes",
    "retention.ms",
    "max.message.bytes",
    "index.interval.bytes",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "file.delete.delay.ms",
    "min.cleanable.dirty.ratio",
    "cleanup.policy",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "compression.type",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "preallocate",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
)
assert set(SYNONYMS) <= set(NAMES) and len(NAMES) == 33

MIN_INSYNC_REPLICAS = "min.insync.replicas"
DEFAULT_MIN_INSYNC_REPLICAS = 1

# ConfigEntry.ConfigSource names, as kafka-configs prints them
TOPIC, DYNAMIC_DEFAULT_BROKER, STATIC_BROKER = (
    "DYNAMIC_TOPIC_CONFIG",
    "DYNAMIC_DEFAULT_BROKER_CONFIG",
    "STATIC_BROKER_CONFIG",
)


def effective(name: str, topic: dict, cluster: dict, static: dict) -> tuple[str, str] | None:
    """(value, source) of topic config `name` when it is not Kafka's default: the
    topic's own value, else the cluster-wide dynamic broker config, else the
    static one (server.properties), each through the synonym whose source
    counts (Kafka keeps only synonyms from the first one named as the topic
    config's main synonym on: a static log.retention.hours alone reads as the
    default). None when the default applies."""
    if name in topic:
        return topic[name], TOPIC
    primary = SYNONYMS.get(name, (None,))[0]
    if primary is None:
        return None
    for source, values in ((DYNAMIC_DEFAULT_BROKER, cluster), (STATIC_BROKER, static)):
        if primary in values:
            return values[primary], source
    return None
