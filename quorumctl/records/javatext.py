"""Bytes as text the way Kafka's tools print them: Java's `new String(bytes, UTF_8)`.

kafka-dump-log prints record keys and payloads with its StringDecoder and header
keys with Utils.utf8 (RecordHeader.key()), both `new String(bytes,
StandardCharsets.UTF_8)`. On bytes that are not UTF-8 the JDK's decoder
(java.lang.String.decodeUTF8_UTF16, JDK 17) puts U+FFFD for each maximal ill-formed
subpart, as Python's `errors="replace"` does, except for one class of
sequences: a lead byte ED followed by A0..BF (the encoding of a UTF-16
surrogate, U+D800..U+DFFF). Python replaces ED and each following byte on its
own (ED only leads 80..9F in UTF-8); Java reads the bytes as a three-byte
form, finds a surrogate and replaces the whole (ED A0..BF plus a continuation
byte: one U+FFFD for three bytes; with no continuation byte after it: one
U+FFFD for ED A0..BF, the next byte read anew). tests/unit/test_javatext.py
holds this against the real JVM on every one- and two-byte string and tens of
thousands of longer ones.
"""

from __future__ import annotations

import codecs
import re


def _java_replace(exc: UnicodeError) -> tuple[str, int]:
    """Error handler for Python's UTF-8 decoder: Python's replacement (one
    U+FFFD per maximal ill-formed subpart, exc.start..exc.end), but an encoded
    surrogate (ED A0..BF [80..BF]) is one U+FFFD, as the JDK's decoder has it."""
    if not isinstance(exc, UnicodeDecodeError):  # (only decoders are given it)
        raise exc
    b = exc.object
    i = exc.start
    n = len(b)
    if b[i] == 0xED and i + 1 < n and 0xA0 <= b[i + 1] <= 0xBF:
        end = i + 2
        if end < n and 0x80 <= b[end] <= 0xBF:
            end += 1
        return "\ufffd", end
    return "\ufffd", exc.end


ERRORS = "quorumctl.java-utf8"
codecs.register_error(ERRORS, _java_replace)

# ED is no continuation byte, so each ED A0..BF starts an ill-formed subpart of its own:
# without one, Python's replacement is Java's, at C speed
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")

# Whether the last bytes decoded were not UTF-8. A topic's payloads are alike (text, or
# binary such as Avro or metadata records), and a failed strict decode costs an exception
# (about 1 us, more than decoding a short payload), so after one that was not UTF-8 the
# next is decoded with replacement first. Only the speed depends on it, never the text.
_binary = False


def java_utf8(b: bytes) -> str:
    """`new String(b, StandardCharsets.UTF_8)`. Valid UTF-8 costs one decode, as
    bytes that are not UTF-8 mostly do (Java's rule differs from Python's only
    where ED A0..BF occurs)."""
    global _binary
    if not _binary:
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            _binary = True
    s = b.decode("utf-8", "replace")
    if "\ufffd" not in s:  # nothing replaced: it was UTF-8
        _binary = False
        return s
    if _SURROGATE.search(b) is None:
        return s
    return b.decode("utf-8", ERRORS)
