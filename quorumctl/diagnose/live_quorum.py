"""The live quorum (DescribeQuorum) against the files and itself: the cluster id and each
live voter's directory id against the log dirs' meta.properties, and a voter whose node
fetches as an observer under another directory id (a replaced disk). doctor
(live_checks) and voters check (voters) both report these."""

from __future__ import annotations

from .findings import Finding, Report


def live_findings(report: Report, q, source: str) -> list[Finding]:
    """The live quorum (DescribeQuorum) against the files: cluster id, and each
    live voter's directory id against the meta.properties of that node's dirs."""
    out = []
    clusters: set[str] = {c for d in report.log_dirs if (c := (d.meta or {}).get("cluster.id")) is not None}
    if q.cluster_id and clusters and q.cluster_id not in clusters:
        out.append(
            Finding(
                "live-cluster-id-differs",
                "error",
                f"{source} answers for cluster {q.cluster_id}, the log dirs belong to {sorted(clusters)}",
                [f"{source}: DescribeCluster", *[d.meta_at("cluster.id") for d in report.log_dirs if d.meta]],
                "the files given are not this cluster's (or were reformatted)",
            )
        )
    if q.leader_id < 0:
        out.append(
            Finding(
                "live-no-leader",
                "error",
                f"{source}: the quorum has no leader (epoch {q.leader_epoch})",
                [f"{source}: DescribeQuorum"],
                "run `quorumctl describe health` to see which voters "
                "answer; if the majority is lost for good, see `quorumctl recover`",
            )
        )
    from ..domain.quorum import replaced_voters

    replaced = {r.voter.id: r for r in replaced_voters(q)}
    out += observer_findings(q, source, source)
    for v in q.voters:
        if v.directory_id is None:
            continue
        for d in report.log_dirs:
            if v.id in replaced and d.meta and d.meta.get("directory.id") == replaced[v.id].observer.directory_id:
                continue  # the node's new disk: named by voter-directory-replaced
            if (
                d.replica is not None
                and d.meta
                and d.meta.get("node.id") == v.id
                and d.meta.get("directory.id") not in (None, v.directory_id)
            ):
                out.append(
                    Finding(
                        "live-directory-id-differs",
                        "error",
                        f"the live quorum holds voter {v.id} with directory id {v.directory_id}, but "
                        f"{d.path} (node {v.id}'s metadata log dir) has {d.meta['directory.id']}",
                        [
                            f"{source}: DescribeQuorum voter {v.id}",
                            f"{d.meta_at('directory.id')}: directory.id={d.meta['directory.id']}",
                        ],
                        f"with the node running on it: quorumctl replace-controller {v.id} "
                        f"--bootstrap-controller {source} (docs/membership.md)",
                    )
                )
    return out


def observer_findings(q, source: str, bootstrap: str, flag: str = "--bootstrap-controller") -> list[Finding]:
    """An observer fetching with a voter's id but another directory id: that voter's
    disk was replaced (formatted again), so it runs as an observer; the voter set still
    names the old directory, and the quorum is one voter short. The same finding for
    voters check, doctor and (as a reason) describe health: domain.quorum.replaced_*."""
    from ..domain.quorum import replaced_fix, replaced_text, replaced_voters

    return [
        Finding(
            "voter-directory-replaced",
            "error",
            replaced_text(q, r),
            [
                f"{source}: DescribeQuorum voter {r.voter.id} directory id {r.voter.directory_id}",
                f"{source}: DescribeQuorum observer {r.observer.id} directory id {r.observer.directory_id}",
            ],
            replaced_fix(r.voter.id, f"{flag} {bootstrap}"),
            node_id=r.voter.id,
        )
        for r in replaced_voters(q)
    ]
