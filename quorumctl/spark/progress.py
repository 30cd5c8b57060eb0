"""What spark-export shows on stderr while it runs: a spinner (or one line)
while the JVM starts, then a Rich bar over the write job's tasks.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, TextIO

from ..render.output import Printer

if TYPE_CHECKING:  # Rich is imported when a spinner is shown
    from rich.status import Status


class TaskBar(threading.Thread):
    """Follow the write job's tasks on the driver with a Rich progress bar."""

    def __init__(self, sc, group: str, total_tasks: int, description: str, printer: Printer):
        super().__init__(daemon=True)
        self.printer = printer
        self.sc = sc
        self.group = group
        self.total = total_tasks
        self.description = description
        self.done = threading.Event()

    def _counts(self, tracker):
        completed = active = total = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            for sid in job.stageIds:
                st = tracker.getStageInfo(sid)
                if st is not None:
                    completed += st.numCompletedTasks
                    active += st.numActiveTasks
                    total += st.numTasks
        return completed, active, total

    def run(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        tracker = self.sc.statusTracker()
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("tasks ({task.fields[active]} running)"),
            TimeElapsedColumn(),
            console=self.printer.console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task(self.description, total=self.total, active=0)
            while True:
                finished = self.done.wait(0.5)
                try:
                    completed, active, total = self._counts(tracker)
                except Exception:  # the JVM went away under us: stop showing progress
                    return
                bar.update(task, completed=completed, total=max(total, self.total), active=active)
                if finished:
                    return


class starting:
    """Something on stderr while the JVM starts (~10 s of nothing otherwise): a
    Rich spinner on a terminal (gone once Spark is up), else one line; nothing
    with --no-progress. The spinner writes to a duplicate of fd 2 taken first:
    start_session points fd 2 at a filtering pipe meanwhile, which would hold
    back a line without a newline."""

    def __init__(self, master: str | None, progress: bool | None, printer: Printer):
        self.printer = printer
        self.what = f"starting Spark (master {master or 'from spark-submit'}); the JVM takes a few seconds"
        self.progress = progress
        self.status: Status | None = None
        self.file: TextIO | None = None

    def __enter__(self):
        if self.progress is False:
            return self
        self.printer.stderr.flush()
        if self.printer.stderr_isatty:
            self.file = os.fdopen(os.dup(self.printer.stderr.fileno()), "w", encoding="utf-8", errors="replace")
            self.status = self.printer.console(file=self.file).status(self.what)
            self.status.__enter__()
        else:
            self.printer.tell(self.what)
        return self

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.__exit__(*exc)
        if self.file is not None:
            self.file.close()


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
