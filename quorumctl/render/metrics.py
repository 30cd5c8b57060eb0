"""`quorumctl serve`'s /metrics: a sampler's snapshot as OpenMetrics (or the
Prometheus text format for a scraper that asks for it), through the
`prometheus_client` library. Imported only by `serve`; each metric is
described in docs/metrics.md (a test holds the two to the same names)."""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

from ..domain.quorum_metrics import VERDICTS, Snapshot

P = "kraft_quorum_"


def _g(name: str, doc: str, value, labels: list[str] | None = None) -> GaugeMetricFamily:
    if labels is not None:
        return GaugeMetricFamily(P + name, doc, labels=labels)
    return GaugeMetricFamily(P + name, doc, value=value)


def families(s: Snapshot):
    """The metric families of one snapshot (a value that is unknown is left out,
    never shown as a made-up number)."""
    yield _g("up", "1 when some controller answered the last sample, else 0.", 1 if s.up else 0)
    v = GaugeMetricFamily(
        P + "verdict",
        "1 for the verdict of the last sample (as describe health --watch), 0 for the others.",
        labels=["verdict"],
    )
    for name in VERDICTS:
        v.add_metric([name], 1 if s.verdict == name else 0)
    yield v
    yield _g("has_leader", "1 when a controller answered DescribeQuorum as the leader.", 1 if s.has_leader else 0)
    for name, doc, val in (
        ("leader_id", "The leader's node id.", s.leader_id),
        ("leader_epoch", "The leader epoch.", s.leader_epoch),
        ("high_watermark", "The high watermark of __cluster_metadata.", s.high_watermark),
        (
            "high_watermark_age_seconds",
            "Seconds since the high watermark last moved (a healthy leader commits at least every 500 ms).",
            s.high_watermark_age_seconds,
        ),
        ("voters", "Voters in the leader's voter set.", s.voters),
        (
            "voters_caught_up",
            "Voters caught up (lastCaughtUp within controller.quorum.fetch.timeout.ms of the leader's).",
            s.caught_up,
        ),
        ("majority", "Voters a majority needs.", s.majority),
        ("can_lose_voters", "How many more voters the quorum can lose and keep a caught-up majority.", s.can_lose),
    ):
        if val is not None:
            yield _g(name, doc, val)
    yield _g(
        "stale_registrations", "Registered controllers that are not voters and do not answer.", s.stale_registrations
    )
    yield _g("controllers_answering", "Controllers that answered the last sample.", s.controllers_answering)
    yield _g("controllers_probed", "Controllers probed in the last sample.", s.controllers_probed)
    fams = {
        k: GaugeMetricFamily(P + k, d, labels=["voter"])
        for k, d in (
            ("voter_caught_up", "1 when the voter is caught up with the leader, else 0."),
            ("voter_lag_records", "The leader's log end offset minus the voter's."),
            ("voter_lag_seconds", "How far the voter's last caught-up time is behind the leader's."),
            ("voter_last_fetch_age_seconds", "Seconds since the voter last fetched, by the leader's clock."),
            ("voter_reachable", "1 when the voter answered our probe, else 0."),
        )
    }
    for r in s.voter_rows:
        lab = [str(r.id)]
        for key, val in (
            ("voter_caught_up", r.caught_up),
            ("voter_lag_records", r.lag_records),
            ("voter_lag_seconds", r.lag_seconds),
            ("voter_last_fetch_age_seconds", r.last_fetch_age_seconds),
            ("voter_reachable", r.reachable),
        ):
            if val is not None:
                fams[key].add_metric(lab, float(val))
    yield from fams.values()
    ol = GaugeMetricFamily(
        P + "observer_lag_records",
        "The leader's log end offset minus the observer's (brokers and controllers that are not voters).",
        labels=["node"],
    )
    oa = GaugeMetricFamily(
        P + "observer_last_fetch_age_seconds",
        "Seconds since the observer last fetched, by the leader's clock.",
        labels=["node"],
    )
    for o in s.observer_rows:
        if o.lag_records is not None:
            ol.add_metric([str(o.id)], o.lag_records)
        if o.last_fetch_age_seconds is not None:
            oa.add_metric([str(o.id)], o.last_fetch_age_seconds)
    yield ol
    yield oa
    yield CounterMetricFamily(
        P + "leader_epoch_changes", "Leader epoch increases seen since the exporter started.", value=s.epoch_changes
    )
    yield CounterMetricFamily(P + "samples", "Samples taken.", value=s.samples)
    e = CounterMetricFamily(
        P + "sample_errors",
        "Samples that failed, by kind: unreachable (nothing answered), refused, error, internal.",
        labels=["kind"],
    )
    for kind in ("unreachable", "refused", "error", "internal"):
        e.add_metric([kind], s.sample_errors.get(kind, 0))
    yield e
    yield _g("sample_duration_seconds", "How long the last sample took (at most the interval).", s.sample_seconds)
    if s.at:
        yield _g("last_sample_timestamp_seconds", "When the last sample was taken (Unix time).", s.at)


class SnapshotCollector(Collector):
    def __init__(self, snapshot):
        self.snapshot = snapshot

    def collect(self):
        return families(self.snapshot())


def registry_for(snapshot) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SnapshotCollector(snapshot))
    return reg


def exposition(registry: CollectorRegistry, accept: str | None) -> tuple[bytes, str]:
    """The scrape's body and content type: OpenMetrics when the scraper accepts
    it (Prometheus does), else the Prometheus text format."""
    from prometheus_client.exposition import choose_encoder

    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type
