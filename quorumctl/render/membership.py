"""replace-controller's plan and result (text and JSON)."""

from __future__ import annotations


def replace_text(plan) -> str:
    lines = list(plan.checked)
    if not plan.apply:
        lines += [f"step {i}: {s}" for i, s in enumerate(plan.steps, 1)]
        lines.append(
            f"DRY RUN of replacing controller {plan.controller_id}: run again with --apply to make "
            f"{'these changes' if len(plan.steps) > 1 else 'this change'}"
        )
        return "\n".join(lines)
    lines += [f"done: {d}" for d in plan.done] + plan.verified
    lines.append(
        f"Replaced controller {plan.controller_id}: directory id {plan.old_directory_id or '(removed before)'} "
        f"-> {plan.new_directory_id}"
    )
    return "\n".join(lines)


def clear_text(plan) -> str:
    lines = list(plan.checked)
    if plan.method is not None:
        lines.append(f"method: {plan.method}")
    for i, s in enumerate(plan.steps, 1):
        head = f"step {i} [{s.state}] ({s.who}): "
        what = s.what.replace("\n", "\n    ")
        lines.append(head + what + (f"\n    ({s.evidence})" if s.evidence else ""))
    if plan.kind is None:
        lines.append(f"node {plan.node_id} is not a registered {plan.looked_at[:-1]}: nothing to clear")
    elif plan.kind == "unknown":
        lines.append(
            f"node {plan.node_id} is no registered controller; whether it is a registered broker is not known "
            "from the controllers: run the step above, or this command with --bootstrap-server"
        )
    elif plan.cleared:
        lines.append(
            f"node {plan.node_id}'s registration blocks nothing any more"
            if plan.applied or plan.method in (None, "re-register")
            else f"DRY RUN of clearing node {plan.node_id}'s registration: run again with --apply to send it"
        )
        if plan.upgrade and plan.method == "re-register":
            lines.append(f"next: {plan.upgrade}")
    else:
        lines.append(
            f"node {plan.node_id}'s registration still blocks: do the steps marked [to do], then run this again"
        )
    return "\n".join(lines)
