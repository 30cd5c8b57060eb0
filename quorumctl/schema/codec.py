"""One codec for every described message: compiles a `Message` into a
specialised decode function and encode function per version.

The functions are generated as Python source once (on first use of a version)
so the hot path has no per-field interpretation: consecutive fixed-size fields
become one `struct.unpack_from`, arrays of fixed-size primitives one unpack, and
tagged fields are matched by a generated if-chain. Decoded values are dicts
whose keys follow the schema order, which is the order Kafka's JsonConverter
prints; tagged fields appear only when they were present on the wire (Kafka
writes them only when they differ from their default).

Every length read from the input is checked against the bytes that remain
before anything is allocated, so hostile input yields `DecodeError`, never a
huge allocation or a long loop.
"""

from __future__ import annotations

import struct
from base64 import urlsafe_b64decode
from binascii import b2a_base64

from .spec import Field, Message

FIXED = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}


class DecodeError(ValueError):
    """Input that does not follow the schema; `pos` is a byte offset into the buffer."""

    def __init__(self, msg: str, pos: int | None = None):
        super().__init__(msg)
        self.pos = pos


class EncodeError(ValueError):
    pass


# -- primitives shared by generated code and hand-written framing -------------


def read_uvarint(buf, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """An unsigned varint of at most `max_bytes` (5 for 32-bit values, 10 for 64-bit)."""
    b = buf[pos]
    pos += 1
    if b < 0x80:
        return b, pos
    result = b & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 7 * (max_bytes - 1):
            raise DecodeError(f"unsigned varint longer than {max_bytes} bytes", pos)


def uvarint_bytes(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint_bytes(n: int) -> bytes:
    return uvarint_bytes((n << 1) ^ (n >> 63))


_B64URL = bytes.maketrans(b"+/", b"-_")
_uuid_cache: dict[bytes, str] = {}


def uuid_str(raw: bytes) -> str:
    """Kafka's Uuid.toString: base64url without padding. Cached: a metadata log
    names the same topic and directory ids over and over."""
    s = _uuid_cache.get(raw)
    if s is None:
        if len(_uuid_cache) > 32_768:  # bounded: memory must not grow with the log
            _uuid_cache.clear()
        s = _uuid_cache[raw] = b2a_base64(raw, newline=False)[:22].translate(_B64URL).decode("ascii")
    return s


uuid_cached = _uuid_cache.get  # raw bytes -> text if uuid_str has made it (the cache is cleared, never replaced)


def uuid_bytes(text: str) -> bytes:
    try:
        raw = urlsafe_b64decode(text + "==")
    except (ValueError, TypeError) as e:
        raise EncodeError(f"invalid uuid {text!r}: {e}") from None
    if len(raw) != 16:
        raise EncodeError(f"invalid uuid {text!r}: decodes to {len(raw)} bytes, not 16")
    return raw


def _short(pos):
    raise DecodeError("length runs past the end of the data", pos)


def _too_many(n, pos):
    raise DecodeError(f"array length {n} exceeds the remaining bytes", pos)


def _bad_null(what, pos):
    raise DecodeError(f"null {what} in a non-nullable field", pos)


_arrays: dict[tuple[str, int], object] = {}


def _arr(code: str, n: int):
    """A compiled unpacker for n fixed-size elements (formats reused across calls)."""
    fn = _arrays.get((code, n))
    if fn is None:
        fn = _arrays[(code, n)] = struct.Struct(">" + str(n) + code).unpack_from
    return fn


def _jtext_fn():
    """The function giving msgspec's JSON text of a decoded value (strings, bytes as base64,
    lists of them). msgspec is imported here, when dump-log's text decoders are first
    generated, so that importing the schema registry stays light (describe never needs it)."""
    import msgspec

    encode = msgspec.json.Encoder().encode
    return lambda value: encode(value).decode("utf-8")


_array_texts: dict[str, dict[bytes, str]] = {}


def _array_text(code: str, raw: bytes) -> str:
    """The JSON text of an array of fixed-size numbers or uuids given its bytes (memoised)."""
    memo = _array_texts[code]
    if len(memo) > TAIL_MEMO:
        memo.clear()
    if code == "16s":
        text = "[" + ",".join('"' + uuid_str(raw[p : p + 16]) + '"' for p in range(0, len(raw), 16)) + "]"
    else:
        text = "[" + ",".join(map(str, struct.unpack(f">{len(raw) // struct.calcsize(code)}{code}", raw))) + "]"
    memo[raw] = text
    return text


_ENV = {
    "_array_text": _array_text,
    "_ucached": uuid_cached,
    "_arr": _arr,
    "_uv": read_uvarint,
    "_uvb": uvarint_bytes,
    "_ustr": uuid_str,
    "_ubytes": uuid_bytes,
    "_short": _short,
    "_too_many": _too_many,
    "_bad_null": _bad_null,
    "_struct": struct,
    "DecodeError": DecodeError,
    "EncodeError": EncodeError,
}


# -- code generation ----------------------------------------------------------


class _Gen:
    """Generates the functions for one message version (and its nested structs)."""

    def __init__(self, msg: Message, version: int, text: bool = False):
        self.msg = msg
        self.v = version
        self.text = text  # generate (buf, pos, L) -> (JSON text, pos) instead of (buf, pos) -> (dict, pos)
        self.flex = msg.flexible_in(version)
        self.env = dict(_ENV)
        self.src: list[str] = []
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value, prefix="_k"):
        nm = self.name(prefix)
        self.env[nm] = value
        return nm

    # ---- decode ----
    def dec_struct(self, fields: list[Field], fname: str, top=False, tags=True, wrap=True):
        v = self.v
        body: list[str] = []
        present = [f for f in fields if f.present_in(v)]
        untagged = [f for f in present if not f.tagged_in(v)]
        tagged = [f for f in present if f.tagged_in(v)]
        var = {id(f): f"v{i}" for i, f in enumerate(present)}
        # group consecutive fixed-size non-nullable fields into one unpack
        i = 0
        while i < len(untagged):
            f = untagged[i]
            if not f.is_array and f.elem in FIXED:
                j = i
                fmt = ">"
                while j < len(untagged) and not untagged[j].is_array and untagged[j].elem in FIXED:
                    fmt += FIXED[untagged[j].elem]
                    j += 1
                s = struct.Struct(fmt)
                sn = self.const(s.unpack_from, "_S")
                grp = untagged[i:j]
                names = [var[id(g)] for g in grp]
                body.append(f"{', '.join(names)}, = {sn}(buf, pos)")
                body.append(f"pos += {s.size}")
                for g in grp:
                    if g.elem == "uuid":
                        x = var[id(g)]
                        body.append(f"{x} = _ucached({x}) or _ustr({x})" if self.text else f"{x} = _ustr({x})")
                i = j
            else:
                body.extend(self.dec_value(f, var[id(f)]))
                i += 1
        if self.flex and tags:
            body.append("ntag = buf[pos]")
            body.append("if ntag < 128: pos += 1")
            body.append("else: ntag, pos = _uv(buf, pos)")
            for f in tagged:
                body.append(f"{var[id(f)]} = _MISSING")
            body.append("unknown = None")
            body.append("for _ in range(ntag):")
            body.append("    tag = buf[pos]")
            body.append("    if tag < 128: pos += 1")
            body.append("    else: tag, pos = _uv(buf, pos)")
            body.append("    size = buf[pos]")
            body.append("    if size < 128: pos += 1")
            body.append("    else: size, pos = _uv(buf, pos)")
            body.append("    end = pos + size")
            body.append("    if end > L: _short(pos)")
            kw = "if"
            for f in tagged:
                body.append(f"    {kw} tag == {f.tag}:")
                body.extend("        " + line for line in self.dec_value(f, var[id(f)]))
                body.append(
                    "        if pos != end: raise DecodeError("
                    f"'tagged field {f.name} has ' + str(end - pos) + ' bytes left over', pos)"
                )
                kw = "elif"
            if tagged:
                body.append("    else:")
                pad = "        "
            else:
                pad = "    "
            body.append(f"{pad}if unknown is None: unknown = []")
            body.append(f"{pad}unknown.append([tag, buf[pos:end].hex()])")
            body.append("    pos = end")
        if self.text:
            self._text_out(present, var, body, fname, tags, wrap)
            return
        # build the dict in schema order
        out = []
        lead = []
        k = 0
        while k < len(present) and not present[k].tagged_in(v):
            lead.append(present[k])
            k += 1
        out.append("d = {" + ", ".join(f"{f.key!r}: {var[id(f)]}" for f in lead) + "}")
        for f in present[k:]:
            if f.tagged_in(v):
                out.append(f"if {var[id(f)]} is not _MISSING: d[{f.key!r}] = {var[id(f)]}")
            else:
                out.append(f"d[{f.key!r}] = {var[id(f)]}")
        if self.flex:
            out.append("if unknown: d['_unknownTaggedFields'] = unknown")
        self.env["_MISSING"] = _MISSING
        lines = [f"def {fname}(buf, pos):", "    L = len(buf)"]
        lines += ["    " + line for line in body + out]
        lines.append("    return d, pos")
        self.src.append("\n".join(lines))

    def _text_out(self, present: list[Field], var: dict, body: list[str], fname: str, tags=True, wrap=True):
        """Finish a text function: the struct's JSON object, fields in schema order
        (tagged ones only when present), exactly as msgspec writes the decoded dict."""
        v = self.v
        out = ["s = ''"]
        lit: list[str] = []  # consecutive always-present fields: one f-string

        def flush():
            if lit:
                out.append("s += f'" + "".join(lit) + "'")
                lit.clear()

        for i, f in enumerate(present):
            name, tmp = var[id(f)], f"t{i}"
            expr = self.text_expr(f, name)
            if f.tagged_in(v):
                flush()
                out.append(f"if {name} is not _MISSING:")
                out.append(f"    {tmp} = {expr}")
                out.append(f"    s += f',\"{f.key}\":{{{tmp}}}'")
            elif f.elem == "uuid" and not f.is_array:
                lit.append(f',"{f.key}":"{{{name}}}"')  # base64url: nothing to escape
            else:
                if expr != name:
                    out.append(f"{tmp} = {expr}")
                    name = tmp
                lit.append(f',"{f.key}":{{{name}}}')
        flush()
        if self.flex and tags:
            out.append("if unknown: s += ',\"_unknownTaggedFields\":' + _jtext(unknown)")
        self.env["_MISSING"] = _MISSING
        lines = [f"def {fname}(buf, pos, L):"]
        lines += ["    " + line for line in body + out]
        # wrap: the whole object; else its members, each after a comma (a part of an object)
        lines.append("    return '{' + s[1:] + '}', pos" if wrap else "    return s, pos")
        self.src.append("\n".join(lines))

    @staticmethod
    def _text_array(f: Field) -> bool:
        """An array whose text the text decoder makes straight from its bytes."""
        return f.is_array and f.elem in FIXED and f.elem not in ("bool", "float64")

    def text_expr(self, f: Field, x: str) -> str:
        """A Python expression giving the JSON text of decoded value `x` of field f."""
        if f.is_array:
            if self._text_array(f):
                e = x
            elif f.is_struct:
                e = f"'[' + ','.join({x}) + ']'"
            elif f.elem == "uuid":
                e = f"('[\"' + '\",\"'.join({x}) + '\"]' if {x} else '[]')"
            elif f.elem in FIXED and f.elem not in ("bool", "float64"):
                e = f"'[' + ','.join(map(str, {x})) + ']'"
            else:
                return f"_jtext({x})"
        elif f.is_struct:
            e = x
        elif f.elem == "bool":
            return f"('true' if {x} else 'false')"
        elif f.elem == "uuid":
            return f"'\"' + {x} + '\"'"
        elif f.elem in FIXED and f.elem != "float64":
            return x
        else:
            return f"_jtext({x})"  # strings, bytes (base64), doubles: msgspec's own text
        return f"('null' if {x} is None else {e})" if f.nullable_in(self.v) else e

    def dec_len(self, kind: str, var: str) -> list[str]:
        """Read a length into `var`; -1 means null. kind: 'str', 'bytes', 'array'."""
        if self.flex:
            return [
                f"{var} = buf[pos]",
                f"if {var} < 128: pos += 1",
                f"else: {var}, pos = _uv(buf, pos)",
                f"{var} -= 1",
            ]
        fmt = ">h" if kind == "str" else ">i"
        sn = self.const(struct.Struct(fmt).unpack_from, "_S")
        size = 2 if kind == "str" else 4
        return [f"{var}, = {sn}(buf, pos)", f"pos += {size}"]

    def dec_value(self, f: Field, var: str) -> list[str]:
        v = self.v
        nullable = f.nullable_in(v)
        L: list[str] = []
        if f.is_array:
            L += self.dec_len("array", "n")
            L.append("if n < 0:")
            L.append(f"    {var} = None" if nullable else f"    _bad_null('array {f.name}', pos)")
            L.append("else:")
            L.append("    if n > L - pos: _too_many(n, pos)")
            inner: list[str] = []
            if self.text and self._text_array(f):
                # the array's JSON text, memoised by its bytes (a log repeats the same
                # replica sets and directory lists over and over)
                c = FIXED[f.elem]
                memo = self.const(_array_texts.setdefault(c, {}), "_M")
                inner.append(f"e = pos + n * {struct.calcsize(c)}")
                inner.append("if e > L: _short(pos)")
                inner.append("raw = buf[pos:e]")
                inner.append(f"{var} = {memo}.get(raw)")
                inner.append(f"if {var} is None: {var} = _array_text({c!r}, raw)")
                inner.append("pos = e")
            elif f.elem in FIXED and f.elem != "uuid":
                c = FIXED[f.elem]
                size = struct.calcsize(c)
                inner.append(f"{var} = list(_arr({c!r}, n)(buf, pos))")
                inner.append(f"pos += n * {size}")
            elif f.elem == "uuid":
                inner.append("if pos + 16 * n > L: _short(pos)")
                inner.append(f"{var} = [_ustr(buf[p:p + 16]) for p in range(pos, pos + 16 * n, 16)]")
                inner.append("pos += 16 * n")
            elif f.is_struct:
                sub = self.name("_d")
                self.dec_struct(f.members, sub)
                inner.append(f"{var} = []")
                inner.append(f"app = {var}.append")
                inner.append("for _ in range(n):")
                inner.append(f"    x, pos = {sub}(buf, pos{', L' if self.text else ''})")
                inner.append("    app(x)")
            else:
                inner.append(f"{var} = []")
                inner.append("for _ in range(n):")
                inner += ["    " + line for line in self.dec_scalar(f.elem, "x", False)]
                inner.append(f"    {var}.append(x)")
            L += ["    " + line for line in inner]
            return L
        if f.is_struct:
            sub = self.name("_d")
            self.dec_struct(f.members, sub)
            if nullable:
                sn = self.const(struct.Struct(">b").unpack_from, "_S")
                return [
                    f"m, = {sn}(buf, pos)",
                    "pos += 1",
                    "if m < 0:",
                    f"    {var} = None",
                    "else:",
                    f"    {var}, pos = {sub}(buf, pos{', L' if self.text else ''})",
                ]
            return [f"{var}, pos = {sub}(buf, pos{', L' if self.text else ''})"]
        return self.dec_scalar(f.elem, var, nullable)

    def dec_scalar(self, t: str, var: str, nullable: bool) -> list[str]:
        if t in FIXED:
            c = FIXED[t]
            sn = self.const(struct.Struct(">" + c).unpack_from, "_S")
            L = [f"{var}, = {sn}(buf, pos)", f"pos += {struct.calcsize(c)}"]
            if t == "uuid":
                L.append(f"{var} = _ustr({var})")
            return L
        kind = "str" if t == "string" else "bytes"
        L = self.dec_len(kind, "n")
        L.append("if n < 0:")
        L.append(f"    {var} = None" if nullable else f"    _bad_null({t!r}, pos)")
        L.append("else:")
        L.append("    e = pos + n")
        L.append("    if e > L: _short(pos)")
        if t == "string":
            L.append(f"    {var} = buf[pos:e].decode('utf-8')")
        else:
            L.append(f"    {var} = bytes(buf[pos:e])")
        L.append("    pos = e")
        return L

    # ---- encode ----
    def enc_struct(self, fields: list[Field], fname: str):
        v = self.v
        body: list[str] = []
        present = [f for f in fields if f.present_in(v)]
        tagged = sorted((f for f in present if f.tagged_in(v)), key=lambda f: -1 if f.tag is None else f.tag)
        for f in present:
            if f.tagged_in(v):
                continue
            dn = self.const(f.default_value(), "_def")
            body.append(f"x = d.get({f.key!r}, {dn})")
            body += self.enc_value(f, "x", "ba")
        if self.flex:
            body.append("tags = []")
            for f in tagged:
                dn = self.const(f.default_value(), "_def")
                body.append(f"x = d.get({f.key!r}, {dn})")
                body.append(f"if x != {dn}:")
                body.append("    tb = bytearray()")
                body += ["    " + line for line in self.enc_value(f, "x", "tb")]
                body.append(f"    tags.append(({f.tag}, bytes(tb)))")
            body.append("unknown = d.get('_unknownTaggedFields')")
            body.append("if unknown:")
            body.append("    tags += [(t, bytes.fromhex(h)) for t, h in unknown]")
            body.append("    tags.sort()")
            body.append("ba += _uvb(len(tags))")
            body.append("for t, tb in tags:")
            body.append("    ba += _uvb(t); ba += _uvb(len(tb)); ba += tb")
        lines = [f"def {fname}(d, ba):"] + ["    " + line for line in body or ["pass"]]
        self.src.append("\n".join(lines))

    def enc_len(self, n_expr: str, kind: str, out: str) -> list[str]:
        if self.flex:
            return [f"{out} += _uvb({n_expr} + 1)"]
        fmt = ">h" if kind == "str" else ">i"
        pn = self.const(struct.Struct(fmt).pack, "_P")
        return [f"{out} += {pn}({n_expr})"]

    def enc_value(self, f: Field, x: str, out: str) -> list[str]:
        v = self.v
        nullable = f.nullable_in(v)
        L: list[str] = []
        if f.is_array:
            L.append(f"if {x} is None:")
            if nullable:
                L += ["    " + line for line in self.enc_len("-1", "array", out)]
            else:
                L.append(f"    raise EncodeError('null in non-nullable array {f.name}')")
            L.append("else:")
            L += ["    " + line for line in self.enc_len(f"len({x})", "array", out)]
            if f.is_struct:
                sub = self.name("_e")
                self.enc_struct(f.members, sub)
                L.append(f"    for y in {x}: {sub}(y, {out})")
            elif f.elem in FIXED and f.elem != "uuid":
                c = FIXED[f.elem]
                L.append(f"    {out} += _struct.pack('>' + str(len({x})) + {c!r}, *{x})")
            else:
                L.append(f"    for y in {x}:")
                L += ["        " + line for line in self.enc_scalar(f.elem, "y", False, out)]
            return L
        if f.is_struct:
            sub = self.name("_e")
            self.enc_struct(f.members, sub)
            if nullable:
                return [
                    f"if {x} is None: {out} += b'\\xff'",
                    "else:",
                    f"    {out} += b'\\x01'",
                    f"    {sub}({x}, {out})",
                ]
            return [f"{sub}({x}, {out})"]
        return self.enc_scalar(f.elem, x, nullable, out)

    def enc_scalar(self, t: str, x: str, nullable: bool, out: str) -> list[str]:
        if t == "uuid":
            return [f"{out} += _ubytes({x})"]
        if t in FIXED:
            pn = self.const(struct.Struct(">" + FIXED[t]).pack, "_P")
            return [f"{out} += {pn}({x})"]
        kind = "str" if t == "string" else "bytes"
        L = [f"if {x} is None:"]
        if nullable:
            L += ["    " + line for line in self.enc_len("-1", kind, out)]
        else:
            L.append(f"    raise EncodeError('null in a non-nullable {t}')")
        L.append("else:")
        conv = f"{x}.encode('utf-8')" if t == "string" else f"bytes({x})"
        L.append(f"    b = {conv}")
        L += ["    " + line for line in self.enc_len("len(b)", kind, out)]
        L.append(f"    {out} += b")
        return L


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def _compile(msg: Message, version: int):
    g = _Gen(msg, version)
    g.dec_struct(msg.fields, "decode", top=True)
    g.enc_struct(msg.fields, "encode")
    code = "\n\n".join(g.src)
    ns = g.env
    exec(compile(code, f"<schema {msg.name} v{version}>", "exec"), ns)
    return ns["decode"], ns["encode"], code


TAIL_MEMO = 16_384  # tails remembered per (message, version)


def _lead_fields(msg: Message, version: int) -> list[Field]:
    """The leading fixed-size fields whose bytes the text decoder decodes every
    time, memoising the text of the rest by its bytes; [] when it does not split
    (no such fields, or nothing after them)."""
    present = [f for f in msg.fields if f.present_in(version)]
    k = 0
    while (
        k < len(present) and not present[k].tagged_in(version) and not present[k].is_array and present[k].elem in FIXED
    ):
        k += 1
    return present[:k] if 0 < k < len(present) or (k and msg.flexible_in(version)) else []


def _compile_text(msg: Message, version: int):
    if "_jtext" not in _ENV:
        _ENV["_jtext"] = _jtext_fn()
    g = _Gen(msg, version, text=True)
    present = [f for f in msg.fields if f.present_in(version)]
    k = len(_lead_fields(msg, version))
    if k:
        # Leading fixed-size fields (ids, partition numbers) are decoded each time; the
        # text of the rest is memoised by its bytes: in a controller log the rest repeats
        # (a PartitionRecord's replicas, ISR, leader, epochs and directories are the same
        # for every partition placed on the same brokers).
        g.dec_struct(present[:k], "_lead", tags=False, wrap=False)
        lead = g.src.pop().split("\n")[1:-1]  # its body, inlined below (fixed-size fields only)
        g.dec_struct(present[k:], "_rest", wrap=False)
        g.env["_TM"] = {}
        body = "\n" + "\n".join(lead)
        # the leading fields' text opens the object (their first "," becomes "{"), the
        # memoised rest closes it: one concatenation per record
        assert body.count("\n    s = ''\n") == 1 and "\n    s += f'," in body, body
        body = body.replace("\n    s = ''\n", "\n", 1).replace("\n    s += f',", "\n    s = f'{{", 1)
        g.src.append(
            """def text(buf, pos, L):"""
            + body
            + """
    b = _TM.get(buf[pos:L])
    if b is None:
        raw = buf[pos:L]
        b, end = _rest(buf, pos, L)
        if end != L:
            return '', end
        if len(_TM) >= """
            + str(TAIL_MEMO)
            + """:
            _TM.clear()
        b = _TM[raw] = b + '}'
    return s + b, L"""
        )
    else:
        g.dec_struct(msg.fields, "text", top=True)
    code = "\n\n".join(g.src)
    ns = g.env
    exec(compile(code, f"<schema {msg.name} v{version} text>", "exec"), ns)
    return ns["text"], code


class Codec:
    """Decoder and encoder of one message, for each of its valid versions."""

    def __init__(self, msg: Message):
        self.msg = msg
        self._fns: dict[int, tuple] = {}
        self._text: dict[int, tuple] = {}

    def _get(self, version: int):
        fns = self._fns.get(version)
        if fns is None:
            if not self.msg.supports(version):
                raise DecodeError(f"{self.msg.name} has no version {version}")
            fns = self._fns[version] = _compile(self.msg, version)
        return fns

    def text_decoder(self, version: int):
        """The generated function (buf, pos, end) -> (JSON text of the decoded value, pos):
        the same text as msgspec writes for `decoder`'s dict, without building the dict
        (dump-log's hot path). Same errors as `decoder`; `end` bounds array lengths only,
        `end` must be the end of the value (the text of what follows the leading
        fixed-size fields is memoised by those bytes); the caller checks that the
        returned pos is `end`."""
        fns = self._text.get(version)
        if fns is None:
            self._get(version)  # validates the version
            fns = self._text[version] = _compile_text(self.msg, version)
        return fns[0]

    def lead(self, version: int):
        """(struct, keys, uuid flags) of the leading fixed-size fields the text
        decoder splits off (the bytes after them are what its memo is keyed by),
        or None when it does not split: lets a caller memoise its own work on a
        value by the same tail (spark's typed columns)."""
        fields = _lead_fields(self.msg, version)
        if not fields:
            return None
        return (
            struct.Struct(">" + "".join(FIXED[f.elem] for f in fields)),
            tuple(f.key for f in fields),
            tuple(f.elem == "uuid" for f in fields),
        )

    def decoder(self, version: int):
        """The raw generated function: (buf, pos) -> (dict, pos); may raise
        IndexError/struct.error on short input (callers wrap, see `decode`)."""
        return self._get(version)[0]

    def decode(self, version: int, buf, pos: int = 0) -> tuple[dict, int]:
        fn = self._get(version)[0]
        try:
            return fn(buf, pos)
        except DecodeError:
            raise
        except (IndexError, struct.error):
            raise DecodeError(f"{self.msg.name} v{version} is cut short", len(buf)) from None
        except UnicodeDecodeError as e:
            raise DecodeError(f"{self.msg.name} v{version}: invalid UTF-8 in a string", pos + e.start) from None

    def encode(self, version: int, value: dict) -> bytes:
        fn = self._get(version)[1]
        ba = bytearray()
        try:
            fn(value, ba)
        except EncodeError:
            raise
        except (struct.error, TypeError, AttributeError) as e:
            raise EncodeError(f"{self.msg.name} v{version}: {e}") from None
        return bytes(ba)

    def source(self, version: int) -> str:
        """The generated Python source (for debugging the generator)."""
        return self._get(version)[2]


_codecs: dict[int, Codec] = {}


def codec(msg: Message) -> Codec:
    c = _codecs.get(id(msg))
    if c is None:
        c = _codecs[id(msg)] = Codec(msg)
    return c
