"""doctor's views: text (findings with evidence and remedy) and a table, from its JSON
document; bundle's answer (text and JSON)."""

from __future__ import annotations


def doctor_lines(doc: dict) -> list[str]:
    """doctor's text: what was read, each finding with its evidence and remedy, a count."""
    lines = []
    vs = doc["voter_set"]
    missing = sum(1 for d in doc["log_dirs"] if d["problem"] == "missing")
    lines.append(
        f"Read {len(doc['configs'])} config(s), {len(doc['log_dirs']) - missing} log dir(s)"
        + (f" ({missing} missing)" if missing else "")
        + (f"; voter set {vs['ids']} ({vs['from']}, {vs['source']})" if vs else "; no dynamic voter set")
        + (f"; metadata.version {doc['metadata_version']['name']}" if doc.get("metadata_version") else "")
    )
    regs = doc.get("registrations")
    if regs is not None and regs["visible"]:
        lines.append(
            f"Registered brokers {regs['brokers']} (fenced {regs['fenced']}): the committed metadata log of the "
            f"active controller {regs['source']}, read to its high watermark {regs['high_watermark']}"
        )
    elif regs is not None:
        lines.append(
            f"Registered brokers not visible through the controller listener ({regs['reason']}): give "
            "--bootstrap-server with a broker's address, or a controller's log dir, to check them"
        )
    for d in doc["log_dirs"]:
        if d.get("starts_on") and d["starts_on"].get("notable"):
            lines.append(f"{d['path']} starts on {d['starts_on']['text']}")
    if not doc["findings"]:
        lines.append("No findings.")
        return lines
    return lines + finding_lines(doc["findings"])


def finding_lines(findings: list[dict]) -> list[str]:
    """Findings (doctor's, voters check's) as text: each with its evidence and remedy, then a count."""
    lines = []
    for f in findings:
        lines.append(f"{f['severity'].upper()} {f['code']}: {f['message']}")
        lines.extend(f"  evidence: {e}" for e in f["evidence"])
        lines.append(f"  remedy: {f['remedy']}")
    errors = sum(1 for f in findings if f["severity"] == "error")
    lines.append(f"{len(findings)} finding(s): {errors} error(s), {len(findings) - errors} warning(s)")
    return lines


def findings_table(findings: list[dict], title: str):
    """The findings (doctor's JSON form) as a Rich table: doctor's and voters check's."""
    from rich.table import Table

    t = Table(title=title)
    for col in ("severity", "finding", "evidence", "remedy"):
        t.add_column(col)
    for f in findings:
        t.add_row(f["severity"], f"{f['code']}: {f['message']}", "\n".join(f["evidence"]), f["remedy"])
    if not findings:
        t.add_row("-", "No findings.", "", "")
    return t


def doctor_text(doc: dict) -> str:
    return "\n".join(doctor_lines(doc)) + "\n"


def doctor_table(doc: dict):
    """The findings table, titled with the text's first line (what was read)."""
    return findings_table(doc["findings"], doctor_lines({**doc, "findings": []})[0])


def bundle_text(res: dict) -> str:
    """What `bundle` wrote: the archive, its parts, what could not be gathered."""
    lines = [f"Wrote {res['out']}: {res['parts']} part(s), {res['bytes']} bytes"]
    lines += [f"  {p['name']}: {p['what']}" for p in res["manifest"]["parts"]]
    lines += [f"note: {e}" for e in res["errors"]]
    return "\n".join(lines) + "\n"


def bundle_doc(res: dict) -> dict:
    """bundle's JSON: its result without the manifest, but with the manifest's parts."""
    return {k: v for k, v in res.items() if k != "manifest"} | {"parts": res["manifest"]["parts"]}
