"""dump-log's dump of each kind of file that is not a record batch (registered
with filekinds.handles("dump", ...)): Kafka's lines where Kafka has them
(indexes, producer state, txn index), `key: value` lines of ours otherwise;
for JSON and tables, one object per file (Job.put). The record-batch kinds
are dumped by log.py itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..logdir import filekinds
from ..render import dumplog as render_dumplog
from ..render.dumplog import Sink
from ..render.output import json_line


@dataclass
class Result:
    problems: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class Job:
    """What every file's dump is handed: the options, where lines go, the tally."""

    sink: Sink
    opts: render_dumplog.Options
    mode: object  # render.output.Output
    result: Result
    max_bytes: int | None = None
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = 5 * 1024 * 1024

    @property
    def text(self) -> bool:
        from ..render.output import Output

        return self.mode is Output.text

    def put(self, make, *, text: bool | None = None) -> None:
        """For JSON and tables, the file's one object (sink.doc), made only then."""
        if not (self.text if text is None else text):
            self.sink.doc(make())

    def emit(self, lines, errs=(), *, text: bool | None = None) -> None:
        """For text, the file's lines; its problems on stderr (JSON carries them in the object)."""
        from ..render.output import Output

        if self.text if text is None else text:
            self.sink.lines(lines)
        if self.mode is not Output.json:
            for e in errs:
                self.sink.error(e)


@filekinds.handles("dump", filekinds.INDEX, filekinds.TIMEINDEX)
def _dump_index(path, kind, job: Job) -> None:
    from ..render.output import Output
    from ..logdir import indexes
    from ..logdir import index_dump
    from ..logdir import index_checks

    if kind == filekinds.INDEX:
        out, err = index_dump.dump_index_lines(
            path,
            verify_only=job.verify_index_only,
            sanity_check=job.index_sanity_check,
            max_message_size=job.max_message_size,
        )
    else:
        out, err = index_dump.dump_timeindex_lines(
            path, verify_only=job.verify_index_only, sanity_check=job.index_sanity_check, kafka=job.opts.kafka
        )
    if not job.index_sanity_check:  # the sanity check asks less, as Kafka's does
        err = err + [p.line() for p in index_checks.problems_beyond_dump(path, kind == filekinds.TIMEINDEX)]
    text = job.text
    if job.mode is Output.table and (job.verify_index_only or job.index_sanity_check):
        text = True  # no entries to show: the verdict lines are the output
    key = ("offset", "position") if kind == filekinds.INDEX else ("timestamp", "offset")
    job.put(
        lambda: {
            "kind": kind,
            "file": path,
            "entries": [
                dict(zip(key, e))
                for e in (indexes.read_offset_index(path) if kind == filekinds.INDEX else indexes.read_time_index(path))
            ],
            "mismatches": err,
        },
        text=text,
    )
    if err:
        job.result.problems += 1
    job.emit(out, err, text=text)


@filekinds.handles("dump", filekinds.PRODUCER_SNAPSHOT)
def _dump_producer_snapshot(path, kind, job: Job) -> None:
    from ..logdir import producer_state

    job.put(
        lambda: {
            "kind": kind,
            "file": path,
            "producers": [e.to_json() for e in producer_state.read_producer_snapshot(path)],
        }
    )
    if job.text:
        job.emit(list(producer_state.producer_snapshot_lines(path, job.opts.kafka)))


@filekinds.handles("dump", filekinds.TXNINDEX)
def _dump_txn_index(path, kind, job: Job) -> None:
    from ..logdir import producer_state

    out, err = producer_state.txn_index_lines(path)
    job.put(lambda: {"kind": kind, "file": path, "entries": [e.to_json() for e in producer_state.read_txn_index(path)]})
    if err:
        job.result.problems += 1
    job.emit(out, err)


def _kv(d: dict) -> str:
    return " ".join(f"{k}: {json_line(v) if isinstance(v, (list, dict)) or v is None else v}" for k, v in d.items())


@filekinds.handles("dump", filekinds.QUORUM_STATE)
def _dump_quorum_state(path, kind, job: Job) -> None:
    from ..logdir import statefiles

    qs = statefiles.read_quorum_state(path)
    job.put(lambda: {"kind": kind, "file": path, **qs})
    job.emit(
        [
            f"Quorum state (data_version {qs['data_version']}): "
            + _kv({k: v for k, v in qs.items() if k != "data_version"})
        ]
    )


@filekinds.handles("dump", filekinds.EPOCH_CHECKPOINT)
def _dump_epoch_checkpoint(path, kind, job: Job) -> None:
    from ..logdir import statefiles

    entries = statefiles.read_epoch_checkpoint(path)
    job.put(lambda: {"kind": kind, "file": path, "entries": [{"epoch": e, "startOffset": o} for e, o in entries]})
    job.emit(
        [f"Leader epoch checkpoint: {len(entries)} entries"] + [f"epoch: {e} startOffset: {o}" for e, o in entries]
    )


@filekinds.handles("dump", filekinds.META_PROPERTIES)
def _dump_meta_properties(path, kind, job: Job) -> None:
    from ..logdir import statefiles

    props = statefiles.read_meta_properties(path)
    job.put(lambda: {"kind": kind, "file": path, **props})
    job.emit([_kv(props)])


@filekinds.handles("dump", filekinds.PARTITION_METADATA)
def _dump_partition_metadata(path, kind, job: Job) -> None:
    from ..logdir import statefiles

    pm = statefiles.read_partition_metadata(path)
    job.put(lambda: {"kind": kind, "file": path, **pm})
    job.emit([_kv(pm)])
