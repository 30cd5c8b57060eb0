"""Every message schema quorumctl declares, wherever it lives: the wire messages,
the metadata and control records, and the quorum-state file. The schema-vs-Kafka
test and its digest tool (tools/kafka_schema_digest.py) walk this list. It sits at
the top of the package because it gathers from the layers below (schema holds
only the DSL)."""

from __future__ import annotations

from .schema.spec import Message


def declared_messages() -> list[Message]:
    from .wire import messages
    from .records import control_schemas, metadata_schemas
    from .logdir import statefiles as state_files

    seen: dict[int, Message] = {}
    for module in (messages, control_schemas, metadata_schemas, state_files):
        for value in vars(module).values():
            if isinstance(value, Message):
                seen[id(value)] = value
    for msg in metadata_schemas.METADATA_RECORDS.values():
        seen[id(msg)] = msg
    return list(seen.values())
