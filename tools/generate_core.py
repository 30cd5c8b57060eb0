"""Generate the compiled core's record decoders (rust/src/generated.rs) from the
Python schema declarations: one source of truth for both cores.

For every metadata record type and version that quorumctl/records/metadata_schemas.py
declares (and the control messages of control_schemas.py), a Rust function that
reads the record body and writes its JSON text exactly as the pure path's
generated text decoder (quorumctl/schema/codec.py) writes it: fields in schema
order, tagged fields only when present. Anything that path would treat as an
error, and the rare forms the Rust decoders leave to Python (unknown tagged
fields, doubles), make the function return `Err(Fallback)`: the caller then
asks the Python decoder, so each rare case has one definition.

    python tools/generate_core.py          # rewrite rust/src/generated.rs
    python tools/generate_core.py --check  # exit 1 when it differs (tests/unit/test_core_generated.py)
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "rust" / "src" / "generated.rs"

sys.path.insert(0, str(ROOT))

from quorumctl.records.control_schemas import CONTROL_TYPES  # noqa: E402
from quorumctl.records.metadata_schemas import METADATA_RECORDS, TYPE_NAMES  # noqa: E402
from quorumctl.schema.spec import Field, Message  # noqa: E402

INTS = {
    "int8": ("i8", 1),
    "int16": ("i16", 2),
    "uint16": ("u16", 2),
    "int32": ("i32", 4),
    "uint32": ("u32", 4),
    "int64": ("i64", 8),
}


def has_double(fields: list[Field]) -> bool:
    return any(f.type.endswith("float64") or (f.fields and has_double(f.fields)) for f in fields)


class Gen:
    def __init__(self, msg: Message, version: int, fname: str):
        self.msg = msg
        self.v = version
        self.flex = msg.flexible_in(version)
        self.fname = fname
        self.n = 0
        self.out: list[str] = []

    def sub(self) -> str:
        self.n += 1
        return f"{self.fname}_s{self.n}"

    def length(self, kind: str) -> str:
        """An expression reading a length (-1: null): compact in flexible versions."""
        if self.flex:
            return "r.uvarint()? as i64 - 1"
        return "r.i16()? as i64" if kind == "str" else "r.i32()? as i64"

    def value(self, f: Field, o: str) -> list[str]:
        """Statements reading field f's value and writing its JSON text to `o`."""
        v = self.v
        nullable = f.nullable_in(v)
        L: list[str] = []
        if f.is_array:
            L.append(f"let n = {self.length('array')};")
            L.append("if n < 0 {")
            L.append(f'    {o}.extend_from_slice(b"null");' if nullable else "    return Err(Fallback);")
            L.append("} else {")
            L.append("    if n as u64 > r.left() as u64 { return Err(Fallback); }")
            L.append(f"    {o}.push(b'[');")
            L.append("    for i in 0..n {")
            L.append(f"        if i > 0 {{ {o}.push(b','); }}")
            L += ["        " + s for s in self.element(f, o)]
            L.append("    }")
            L.append(f"    {o}.push(b']');")
            L.append("}")
            return L
        if f.is_struct:
            name = self.sub()
            self.struct(f.members, name)
            if nullable:
                return [f'if r.i8()? < 0 {{ {o}.extend_from_slice(b"null"); }} else {{ {name}(r, {o})?; }}']
            return [f"{name}(r, {o})?;"]
        return self.scalar(f.elem, o, nullable)

    def element(self, f: Field, o: str) -> list[str]:
        if f.is_struct:
            name = self.sub()
            self.struct(f.members, name)
            return [f"{name}(r, {o})?;"]
        return self.scalar(f.elem, o, False)

    def scalar(self, t: str, o: str, nullable: bool) -> list[str]:
        if t in INTS:
            rt, _size = INTS[t]
            return [f"push_int({o}, r.{rt}()?);"]
        if t == "bool":
            return [f'{o}.extend_from_slice(if r.u8()? != 0 {{ b"true" }} else {{ b"false" }});']
        if t == "uuid":
            return [f"push_uuid({o}, r.take(16)?);"]
        if t in ("string", "bytes"):
            push = "push_str" if t == "string" else "push_base64"
            L = [f"let n = {self.length('str' if t == 'string' else 'bytes')};", "if n < 0 {"]
            L.append(f'    {o}.extend_from_slice(b"null");' if nullable else "    return Err(Fallback);")
            L.append("} else {")
            L.append("    if n as u64 > r.left() as u64 { return Err(Fallback); }")
            L.append(f"    {push}({o}, r.take(n as usize)?)?;")
            L.append("}")
            return L
        raise ValueError(f"{self.msg.name} v{self.v}: no Rust decoder for {t}")

    def struct(self, fields: list[Field], name: str) -> None:
        v = self.v
        present = [f for f in fields if f.present_in(v)]
        tagged_seen = False
        direct: list[Field] = []  # written as read: every field before it is untagged
        deferred: list[Field] = []  # held until the tagged fields are read
        for f in present:
            if f.tagged_in(v):
                tagged_seen = True
            (deferred if tagged_seen else direct).append(f)
        body: list[str] = ["let mut first = true;", "out.push(b'{');"]
        if deferred:
            body.append("let mut tmp: Vec<u8> = Vec::new();")
            for i, f in enumerate(deferred):
                body.append(f"let mut t{i}: Option<(usize, usize)> = None;")
        for f in present:
            if f.tagged_in(v):
                continue
            if f in direct:
                body.append(f'key(out, &mut first, b"\\"{f.key}\\":");')
                body += self.value(f, "out")
            else:
                i = deferred.index(f)
                body.append("let s = tmp.len();")
                body += self.value(f, "(&mut tmp)")
                body.append(f"t{i} = Some((s, tmp.len()));")
        if self.flex:
            body.append("let ntag = r.uvarint()?;")
            body.append("for _ in 0..ntag {")
            body.append("    let tag = r.uvarint()?;")
            body.append("    let size = r.uvarint()?;")
            body.append("    if size > r.left() as u64 { return Err(Fallback); }")
            body.append("    let end = r.p + size as usize;")
            body.append("    match tag {")
            for f in present:
                if not f.tagged_in(v):
                    continue
                i = deferred.index(f)
                body.append(f"        {f.tag} => {{")
                body.append("            let s = tmp.len();")
                body += ["            " + s for s in self.value(f, "(&mut tmp)")]
                body.append("            if r.p != end { return Err(Fallback); }")
                body.append(f"            t{i} = Some((s, tmp.len()));")
                body.append("        }")
            body.append("        _ => return Err(Fallback),  // unknown tagged fields: the Python decoder's")
            body.append("    }")
            body.append("}")
        for i, f in enumerate(deferred):
            body.append(f"if let Some((s, e)) = t{i} {{")
            body.append(f'    key(out, &mut first, b"\\"{f.key}\\":");')
            body.append("    out.extend_from_slice(&tmp[s..e]);")
            body.append("}")
        body.append("let _ = first;")
        body.append("out.push(b'}');")
        body.append("Ok(())")
        self.out.append(
            f"fn {name}(r: &mut Reader, out: &mut Vec<u8>) -> Res {{\n" + "\n".join("    " + s for s in body) + "\n}\n"
        )


def generate() -> str:
    parts = [
        "// @generated by tools/generate_core.py from quorumctl/records/metadata_schemas.py\n"
        "// and control_schemas.py: do not edit (tests/unit/test_core_generated.py checks it).\n"
        "#![allow(clippy::all, unused_mut, unused_variables, unused_assignments, unused_comparisons, unused_parens)]\n\n"
        "use crate::decode::{key, push_base64, push_int, push_str, push_uuid, Fallback, Reader, Res};\n"
    ]
    metadata = []
    for api_key, msg in sorted(METADATA_RECORDS.items()):
        if has_double(msg.fields):
            continue  # the Python decoder's: Kafka's text prints doubles as Java does
        for version in msg.versions:
            fname = f"m{api_key}_v{version}"
            g = Gen(msg, version, fname)
            g.struct(msg.fields, fname)
            parts += g.out
            metadata.append((api_key, version, fname))
    control = []
    for ctype, (_name, msg) in sorted(CONTROL_TYPES.items()):
        for version in msg.versions:
            fname = f"c{ctype}_v{version}"
            g = Gen(msg, version, fname)
            g.struct(msg.fields, fname)
            parts += g.out
            control.append((ctype, version, fname))
    lines = [
        "/// The JSON text of a metadata record body (api key, version), or None when",
        "/// the type or version is not one the generated decoders take.",
        "pub fn metadata_body(api_key: u8, version: u8, r: &mut Reader, out: &mut Vec<u8>) -> Option<Res> {",
        "    Some(match (api_key, version) {",
    ]
    lines += [f"        ({a}, {v}) => {f}(r, out)," for a, v, f in metadata]
    lines += ["        _ => return None,", "    })", "}", ""]
    lines += [
        "/// The JSON text of a control record value (type, schema version).",
        "pub fn control_body(ctype: i16, version: i16, r: &mut Reader, out: &mut Vec<u8>) -> Option<Res> {",
        "    Some(match (ctype, version) {",
    ]
    lines += [f"        ({c}, {v}) => {f}(r, out)," for c, v, f in control]
    lines += ["        _ => return None,", "    })", "}", ""]
    lines += [
        "/// Kafka's enum name of a metadata record type (MetadataRecordType).",
        "pub fn type_name(api_key: u8) -> Option<&'static str> {",
        "    Some(match api_key {",
    ]
    lines += [f'        {a} => "{TYPE_NAMES[a]}",' for a in sorted(TYPE_NAMES)]
    lines += ["        _ => return None,", "    })", "}"]
    parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when rust/src/generated.rs differs")
    args = ap.parse_args()
    text = generate()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python tools/generate_core.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
