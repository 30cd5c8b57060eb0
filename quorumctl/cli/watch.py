"""The --watch loops of `describe status|replication|health`: sample, print one
frame through the command's printer, sleep, until Ctrl-C (or --samples, --exit-when-healthy).

The frames are render/quorum's; sampling and judging a history are domain/health_watch's
(`client.Refresher`, `health_watch`). Not a command: `describe` calls these.
"""

import time

from ..errors import ExitStatus
from ..render.output import Output, Printer
from ..render.quorum import quorum_forms, waiting, watch_frame
from ..timefmt import now_ms


def show_quorum(printer: Printer, kind: str, q, out: Output, *, human_readable: bool = False) -> None:
    """One status/replication view of `q` (with the text view, its warnings on stderr)."""
    printer.emit(out, q, **quorum_forms(kind, now_ms(), human_readable))


def watch_quorum(
    printer: Printer, kind: str, refresher, out: Output, every: float, human_readable: bool = False
) -> bool:
    """A live view, refreshed every `every` seconds by `refresher`
    (wire.client.Refresher) until Ctrl-C. A failed refresh keeps the last
    good view on screen with the error and its time beneath it. Returns True
    when stopped after a failed refresh (the quorum was unreachable when the
    operator stopped watching), after saying so on stderr."""
    try:
        if out is Output.table:
            view = waiting("connecting...")
            with printer.live(view) as live:
                while True:
                    if refresher.refresh():
                        view = quorum_forms(kind, now_ms())["table"](refresher.last)
                        frame = watch_frame(view, every, updated=time.strftime("%H:%M:%S"))
                    else:
                        frame = watch_frame(view, every, failure=refresher.failure)
                    live.update(frame, refresh=True)
                    printer.flush()
                    time.sleep(every)
        else:
            clear = out is Output.text and printer.stdout_isatty
            while True:
                if refresher.refresh():
                    if clear:
                        printer.clear_screen()
                    show_quorum(printer, kind, refresher.last, out, human_readable=human_readable)
                    if out is Output.text and not clear:
                        printer.write("\n")
                else:
                    if clear and refresher.last is not None:
                        # redraw the last good view so the error sits beneath it, not below old errors
                        printer.clear_screen()
                        show_quorum(printer, kind, refresher.last, out, human_readable=human_readable)
                    printer.flush()
                    at, error = refresher.failure
                    printer.error(f"{error} (at {at})")
                printer.flush()
                time.sleep(every)
    except KeyboardInterrupt:
        if refresher.failure:
            at, error = refresher.failure
            printer.error(f"stopped after a failed refresh (at {at}): {error}")
            return True
        return False


def watch_health(
    printer: Printer,
    sample,
    out: Output,
    every: float,
    *,
    fail_on_lag: bool = False,
    exit_when_healthy: bool = False,
    samples: int | None = None,
    flapping_epochs: int = 3,
) -> int:
    """`describe health --watch`: sample every `every` seconds (a sample takes at
    most that long), keep a short history, and judge it too (stalled, flapping).
    Returns the exit status: the last sample's, or 0 at the first healthy one
    with `exit_when_healthy`."""
    from dataclasses import replace

    from ..errors import ClusterError
    from ..domain.health_verdict import exit_status
    from ..domain.health_watch import History, Sample, sample_of, watch_verdict
    from ..render.quorum import health_watch_doc, health_watch_frame, health_watch_text

    history = History(flapping_epochs=flapping_epochs)
    status = ExitStatus.INTERRUPTED
    taken = 0
    live = None
    clear = out is Output.text and printer.stdout_isatty
    try:
        if out is Output.table:
            live = printer.live(waiting("probing..."))
            live.start()
        while True:
            t0 = time.monotonic()
            try:
                h = sample()
            except ClusterError as e:
                # nothing answered: one line on stderr (the view above stays), and the watch goes on
                history.add(Sample(time.time(), "unreachable", None, None, None, None))
                status = ExitStatus.UNREACHABLE
                printer.error(f"{e} (at {time.strftime('%H:%M:%S')})")
                taken += 1
                if samples is not None and taken >= samples:
                    return status
                time.sleep(max(0.0, every - (time.monotonic() - t0)))
                continue
            history.add(sample_of(h))
            verdict, extra = watch_verdict(h, history)
            shown = replace(h, verdict=verdict, reasons=extra + h.reasons)
            status = exit_status(h, fail_on_lag, verdict)
            if out is Output.table:
                assert live is not None
                live.update(health_watch_frame(shown, history, every, time.strftime("%H:%M:%S")), refresh=True)
                printer.flush()
            else:
                if clear:
                    printer.clear_screen()
                printer.emit(
                    out,
                    shown,
                    text=lambda s: health_watch_text(s, history, clear),
                    json=lambda s, v=h.verdict: health_watch_doc(s, v, history),
                )
            taken += 1
            if exit_when_healthy and verdict == "healthy":
                return ExitStatus.OK
            if samples is not None and taken >= samples:
                return status
            time.sleep(max(0.0, every - (time.monotonic() - t0)))
    except KeyboardInterrupt:
        return status
    finally:
        if live is not None:
            live.stop()
