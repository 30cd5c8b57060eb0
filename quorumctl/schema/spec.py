"""Declarative message descriptions, in the shape of Kafka's message schemas.

Every wire message and every metadata/control record is described once with
`Message` and `Field`; `quorumctl.schema.codec` compiles those descriptions into
one decoder and one encoder per (message, version). Field names are Kafka's
(PascalCase); decoded values are dicts keyed by Kafka's JSON names (camelCase,
first letter lowered: "EndPoints" -> "endPoints"), so the dicts print in the
same form as Kafka's JsonConverter output.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field

from ..ids import ZERO_UUID


class _Null:
    """Marks a field whose default is null (Kafka's `"default": "null"`)."""

    def __repr__(self):
        return "NULL"


NULL = _Null()


PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "bytes",
    "uuid",
    "records",
}


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; `hi` None means open-ended ("3+")."""

    lo: int
    hi: int | None

    @classmethod
    def parse(cls, text: str | None) -> "Versions | None":
        if text is None or text == "none":
            return None
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, v: int) -> bool:
        return v >= self.lo and (self.hi is None or v <= self.hi)


def json_name(name: str) -> str:
    """Kafka's camelCaseName: the schema name with its first letter lowered."""
    return name[:1].lower() + name[1:]


@dataclass
class Field:
    name: str
    type: str  # "int32", "string", "[]int32", "[]Endpoint", "Endpoint"
    versions: str = "0+"
    nullable: str | None = None  # nullableVersions
    tag: int | None = None
    tagged: str | None = None  # taggedVersions
    default: object = None  # Python value; None means the type's default, NULL means null
    fields: list["Field"] | None = None  # members when the type is a struct or struct array
    ignorable: bool = False
    about: str | None = None  # Kafka's "about": what the field means, where its name does not say

    def __post_init__(self):
        self.key = json_name(self.name)
        self._versions = Versions.parse(self.versions)
        self._nullable = Versions.parse(self.nullable)
        self._tagged = Versions.parse(self.tagged)
        self.is_array = self.type.startswith("[]")
        elem = self.type[2:] if self.is_array else self.type
        self.elem = elem
        self.is_struct = elem not in PRIMITIVES
        if self.is_struct and self.fields is None:
            raise ValueError(f"field {self.name}: struct type {elem} needs fields")

    @property
    def members(self) -> list[Field]:
        """A struct field's own fields (__post_init__ refuses a struct without them)."""
        if self.fields is None:
            raise ValueError(f"field {self.name}: {self.type} is not a struct")
        return self.fields

    def present_in(self, v: int) -> bool:
        return self._versions is not None and v in self._versions

    def nullable_in(self, v: int) -> bool:
        return self._nullable is not None and v in self._nullable

    def tagged_in(self, v: int) -> bool:
        return self._tagged is not None and v in self._tagged

    def default_value(self):
        """The value a field takes when absent (Kafka's defaults per type)."""
        if self.default is NULL:
            return None
        if self.default is not None:
            return self.default
        if self.is_array:
            return []
        return {
            "bool": False,
            "string": "",
            "bytes": b"",
            "records": None,
            "uuid": ZERO_UUID,
            "float64": 0.0,
        }.get(self.elem, None if self.is_struct else 0)


@dataclass
class Message:
    name: str
    valid: str  # validVersions
    fields: list[Field]
    flexible: str | None = "0+"  # flexibleVersions; None = never flexible
    api_key: int | None = None
    kind: str = "data"  # "metadata", "request", "response", "header", "data"
    _valid: Versions = dc_field(init=False, repr=False)

    def __post_init__(self):
        valid = Versions.parse(self.valid)
        assert valid is not None  # every message declared here has versions ("none" is for removed ones)
        self._valid = valid
        self._flexible = Versions.parse(self.flexible)

    def supports(self, v: int) -> bool:
        """Whether `v` is one of the message's valid versions."""
        return v in self._valid

    @property
    def versions(self) -> range:
        hi = self._valid.hi
        if hi is None:  # validVersions is a closed range in every schema ("0-3", "0")
            raise ValueError(f"{self.name}: open-ended validVersions {self.valid!r}")
        return range(self._valid.lo, hi + 1)

    def flexible_in(self, v: int) -> bool:
        return self._flexible is not None and v in self._flexible
