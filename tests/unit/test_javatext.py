"""records.javatext.java_utf8 against the real JVM: a tiny Java program, run
from source at test time, reads byte strings (hex, one a line) and prints
`new String(bytes, StandardCharsets.UTF_8)` as code points, the constructor
Kafka's tools use for record keys, payloads and header keys (StringDecoder,
Utils.utf8); the test compares every line with java_utf8. The inputs: every
1- and 2-byte string; 3-byte strings led by E0..F4 and 4-byte strings led by
E0..F7 over a representative set of following bytes; the classes of
invalid_utf8.py (overlong forms, encoded surrogates, code points above
U+10FFFF, stray continuation bytes, sequences cut short at the end and in the
middle), each also between ASCII and behind a Latin-1 character; and seeded
random strings.
Skips, saying why, without a JDK.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from invalid_utf8 import NAMED, in_context, random_strings, truncations
from quorumctl.records import javatext
from quorumctl.records.javatext import java_utf8

JAVA_SOURCE = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;

public class JavaUtf8 {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            byte[] b = new byte[line.length() / 2];
            for (int i = 0; i < b.length; i++)
                b[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            String s = new String(b, StandardCharsets.UTF_8);   // Kafka's StringDecoder, Utils.utf8
            int[] cps = s.codePoints().toArray();
            for (int i = 0; i < cps.length; i++) {
                if (i > 0) out.append(' ');
                out.append(Integer.toHexString(cps[i]));
            }
            out.append('\n');
        }
        Writer w = new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.US_ASCII);
        w.write(out.toString());
        w.flush();
    }
}
"""


def _java() -> tuple[str | None, str | None]:
    """(java executable, None) or (None, why the test cannot run)."""
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java") or (home and str(Path(home) / "bin" / "java"))
    if not java or not Path(java).exists():
        return None, "java is not on PATH nor in JAVA_HOME (the differential test runs a Java program)"
    javac = Path(java).resolve().parent / "javac"
    if not javac.exists() and not shutil.which("javac"):
        return None, f"{java} is a JRE without javac (running a Java program from source needs a JDK)"
    return java, None


JAVA, REASON = _java()

# following bytes that stand for every class: ASCII, NUL, DEL, continuation bytes at
# the ends of the ranges E0/ED/F0/F4 allow, lead bytes of each length, invalid leads
REPS = [
    0x00,
    0x41,
    0x7F,
    0x80,
    0x8F,
    0x90,
    0x9F,
    0xA0,
    0xBF,
    0xC0,
    0xC1,
    0xC2,
    0xDF,
    0xE0,
    0xED,
    0xEF,
    0xF0,
    0xF4,
    0xF5,
    0xFF,
]
REPS4 = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xE0, 0xF0]


def inputs() -> list[bytes]:
    out = [bytes([a]) for a in range(256)]
    out += [bytes([a, b]) for a in range(256) for b in range(256)]
    out += [bytes([a, b, c]) for a in range(0xE0, 0xF5) for b in REPS for c in REPS]
    out += [bytes([a, b, c, d]) for a in range(0xE0, 0xF8) for b in REPS4 for c in REPS4 for d in REPS4]
    out += in_context(NAMED + truncations())
    out += random_strings(4000)
    return out


def java_strings(java: str, data: list[bytes], tmp: Path) -> list[str]:
    src = tmp / "JavaUtf8.java"
    src.write_text(JAVA_SOURCE)
    p = subprocess.run(
        [java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", str(src)],
        input="".join(b.hex() + "\n" for b in data).encode("ascii"),
        capture_output=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    lines = p.stdout.decode("ascii").split("\n")
    assert lines[-1] == "" and len(lines) == len(data) + 1, (len(lines), len(data))
    return ["".join(chr(int(h, 16)) for h in line.split()) for line in lines[:-1]]


def test_the_rule_without_java():
    # what Java does where Python's errors="replace" differs: an encoded surrogate
    assert java_utf8(b"\xed\xa0\x80") == "\ufffd"  # Python: three U+FFFD
    assert java_utf8(b"a\xed\xbf\xbfb") == "a\ufffdb"
    assert java_utf8(b"\xed\xa0A") == "\ufffdA"  # Python: two
    assert java_utf8(b"\xed\xa0") == "\ufffd"  # cut short at the end
    assert java_utf8(b"\xed\x9f\xbf") == "\ud7ff"  # the last code point before them
    assert java_utf8(b"\xed\x80A") == "\ufffdA"  # ED 80..9F cut short: as Python
    # elsewhere the same as Python
    for b in (
        b"\xc0\x80",
        b"\xe0\x80\x80",
        b"\xf0\x80\x80\x80",
        b"\xf4\x90\x80\x80",
        b"\xe1\x80A",
        b"\xf0\x90\x80",
        b"\xff\xfe",
        b"\x80\x80",
        "Zoë €".encode(),
    ):
        assert java_utf8(b) == b.decode("utf-8", "replace"), b


@pytest.mark.java
@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_java_utf8_equals_the_jdk(tmp_path):
    data = inputs()
    expected = java_strings(JAVA, data, tmp_path)
    for binary in (False, True):  # whichever decode java_utf8 tries first (it follows the last value)
        wrong = []
        for b, e in zip(data, expected):
            javatext._binary = binary
            if (o := java_utf8(b)) != e:
                wrong.append((b, e, o))
        show = "\n".join(
            f"{b.hex(' ')}: java {[hex(ord(c)) for c in e]} ours {[hex(ord(c)) for c in o]}" for b, e, o in wrong[:20]
        )
        assert not wrong, f"{len(wrong)} of {len(data)} byte strings differ (binary={binary}):\n{show}"
    # not vacuous: the inputs hold many strings where Python's own rule gives another text
    assert sum(b.decode("utf-8", "replace") != e for b, e in zip(data, expected)) > 300
    assert len(data) > 100_000
