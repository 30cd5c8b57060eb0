"""Write completions/ and man/ from the Typer app: `python -m quorumctl.cli.generate [--out DIR]`.

Everything comes from the click command tree of `quorumctl.cli.main.app`: the
commands and their help, every option with its metavar, choices and default,
and the values a parameter's own completion callback offers (--record-type).
The man page's EXAMPLES are real runs of quorumctl at generation time, on log
dirs written with quorumctl's own writer (storage/synth.py) and on the simulated
quorum of quorumctl.testing, with fixed contents, timestamps and ids, so that
regenerating is byte-stable. tests/test_completions_man.py regenerates and fails
when the committed files differ.

The completion scripts are static, not the click protocol that
`quorumctl --install-completion` installs (which starts Python, typer and rich
on every TAB): a static script answers at once, keeps working when the Python
environment is broken during an incident, and can offer just the directories
and the files Kafka keeps in a log dir. Going stale is its cost, and the test
above catches it. Path completion follows the metavar (see PATH_METAVARS).

This module is not one of COMMAND_MODULES: `quorumctl` never imports it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import EXIT_INPUT, EXIT_OK, EXIT_PROBLEMS, EXIT_UNREACHABLE
from ..storage.filekinds import name_patterns

# The page's date: fixed, so regenerating is byte-stable; set it when the version changes.
MAN_DATE = "2026-11-22"

# What a path-like value completes to, by metavar: dir (directories), file (any
# file) or log (directories and the files of a log dir, see filekinds.name_patterns).
PATH_METAVARS = {
    "FILE": "file",
    "DIR": "dir", "LOG_DIR": "dir", "LOG_DIR...": "dir", "OTHER_DIR": "dir", "OUT": "dir",
    "PATH...": "log", "FILE_OR_DIR...": "log", "FILE,...": "log",
}
TYPE_METAVARS = {"int": "INTEGER", "integer": "INTEGER", "int range": "INTEGER", "float": "NUMBER",
                 "float range": "NUMBER"}


@dataclass
class Param:
    names: list[str]           # option names (secondary ones, --no-x, too); [] for an argument
    metavar: str               # the value's name; "" for a flag
    help: str
    argument: bool = False
    repeatable: bool = False   # a repeatable option or a variadic argument
    required: bool = False
    default: str | None = None
    words: list[str] = field(default_factory=list)   # fixed values (choices, the param's own completion)
    files: str | None = None   # dir, file or log (PATH_METAVARS)

    @property
    def takes_value(self) -> bool:
        return bool(self.metavar)


@dataclass
class Cmd:
    path: tuple[str, ...]      # () for quorumctl itself
    help: str
    params: list[Param]
    subcommands: list["Cmd"]

    @property
    def name(self) -> str:
        return " ".join(("quorumctl",) + self.path)

    @property
    def summary(self) -> str:
        return self.help.split("\n", 1)[0].strip()

    @property
    def options(self) -> list[Param]:
        return [p for p in self.params if not p.argument]

    @property
    def arguments(self) -> list[Param]:
        return [p for p in self.params if p.argument]

    def walk(self):
        yield self
        for c in self.subcommands:
            yield from c.walk()


# -- the command tree ------------------------------------------------------------------

def command_tree() -> Cmd:
    """The app as plain data: every command, with -h/--help among its options."""
    import typer.main

    from .main import app
    root = typer.main.get_command(app)
    return _cmd(root, root.make_context("quorumctl", [], resilient_parsing=True), ())


def _cmd(command, ctx, path: tuple[str, ...]) -> Cmd:
    params = [_param(p, ctx) for p in command.params if not getattr(p, "hidden", False)]
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        params.append(_param(help_option, ctx))
    subs = []
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            subs.append(_cmd(sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True), path + (name,)))
    return Cmd(path, (command.help or "").strip(), params, subs)


def _param(p, ctx) -> Param:
    argument = p.param_type_name == "argument"
    flag = not argument and (getattr(p, "is_flag", False) or getattr(p, "count", False))
    choices = list(getattr(p.type, "choices", None) or [])
    if flag:
        metavar = ""
    elif p.metavar:
        metavar = p.metavar
    elif choices:
        metavar = "|".join(str(c) for c in choices)
    elif argument:
        metavar = p.name.upper() + ("..." if p.nargs == -1 else "")
    else:
        metavar = TYPE_METAVARS.get(p.type.name, "TEXT")
    words = []
    if not flag:
        words = [str(c) for c in choices] or [item.value for item in p.shell_complete(ctx, "")]
    default = None
    if not flag and not p.required and p.default not in (None, (), []) and not callable(p.default):
        default = str(p.default)
    # sorted, short ones first: click keeps the help option's names in a set
    names = [] if argument else sorted(list(p.opts) + list(p.secondary_opts), key=lambda n: (n.startswith("--"), n))
    return Param(names=names, metavar=metavar,
                 help=" ".join((getattr(p, "help", None) or "").split()), argument=argument,
                 repeatable=(p.nargs == -1) if argument else bool(getattr(p, "multiple", False)),
                 required=bool(p.required), default=default, words=words,
                 files=None if words else PATH_METAVARS.get(metavar))


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def example_lines(cmd: Cmd) -> list[str]:
    """The commands of the "Example:" paragraphs of a help text."""
    return [p[len("Example:"):].strip() for p in paragraphs(cmd.help) if p.startswith("Example:")]


# -- bash --------------------------------------------------------------------------------

def _sq(s: str) -> str:
    """Single-quoted for sh (bash, zsh and fish alike)."""
    return "'" + s.replace("'", "'\\''") + "'"


def _sh_words(words) -> str:
    return _sq(" ".join(words))


def _value_specs(tree: Cmd) -> list[tuple[tuple, list[tuple[str, str]]]]:
    """[(("words", values) | ("files", kind), [(command path, option or "")])], in tree order."""
    specs: dict[tuple, list[tuple[str, str]]] = {}
    for c in tree.walk():
        path = " ".join(c.path)
        for p in c.params:
            if not p.takes_value:
                continue
            spec = ("words", tuple(p.words)) if p.words else ("files", p.files) if p.files else None
            if spec is None:
                continue
            keys = [(path, "")] if p.argument else [(path, n) for n in p.names]
            specs.setdefault(spec, []).extend(keys)
    return list(specs.items())


def bash_script(tree: Cmd) -> str:
    out = [
        "# bash completion for quorumctl                              -*- shell-script -*-",
        "# Generated by `python -m quorumctl.cli.generate` from the Typer app: do not edit.",
        "#",
        "# Install: `source` it from ~/.bashrc, or copy it to",
        "# /usr/share/bash-completion/completions/quorumctl (loaded on first use).",
        "# Static on purpose (see quorumctl/cli/generate.py): no Python runs on TAB, and",
        "# paths complete to directories and the files Kafka keeps in a log dir.",
        "# `quorumctl --install-completion` installs click's dynamic completion instead.",
        "",
        "# _quorumctl_spec PATH: subs (sub-commands), opts (options) and vopts (options",
        "# that take a value) of the command PATH ('' is quorumctl itself).",
        "_quorumctl_spec() {",
        "    case $1 in",
    ]
    for c in tree.walk():
        opts = [n for p in c.options for n in p.names]
        vopts = [n for p in c.options if p.takes_value for n in p.names]
        out.append(f"        {_sq(' '.join(c.path))})")
        out.append(f"            subs={_sh_words(s.path[-1] for s in c.subcommands)}")
        out.append(f"            opts={_sh_words(opts)}")
        out.append(f"            vopts={_sh_words(vopts)} ;;")
    out += [
        "        *) subs='' opts='' vopts='' ;;",
        "    esac",
        "}",
        "",
        "# _quorumctl_values PATH OPTION WORD: complete the value of OPTION ('' for the",
        "# arguments) of the command PATH; fails when it has no completion.",
        "_quorumctl_values() {",
        "    local words='' files=''",
        '    case "$1|$2" in',
    ]
    for (what, value), keys in _value_specs(tree):
        pats = "|".join(_sq(f"{path}|{opt}") for path, opt in keys)
        assign = f"words={_sh_words(value)}" if what == "words" else f"files={value}"
        out.append(f"        {pats})")
        out.append(f"            {assign} ;;")
    log_case = "|".join(name_patterns())
    out += [
        "        *) return 1 ;;",
        "    esac",
        '    if [[ -n $files ]]; then',
        '        _quorumctl_files "$files" "$3"',
        "    else",
        '        _quorumctl_reply < <(compgen -W "$words" -- "$3")',
        "    fi",
        "}",
        "",
        "# _quorumctl_files KIND WORD: dir (directories), file (any file) or log",
        "# (directories and the files of a Kafka log dir)",
        "_quorumctl_files() {",
        "    local f",
        "    compopt -o filenames 2>/dev/null  # quote names, add / to directories",
        "    case $1 in",
        '        dir) _quorumctl_reply < <(compgen -d -- "$2") ;;',
        '        file) _quorumctl_reply < <(compgen -f -- "$2") ;;',
        "        log)",
        '            _quorumctl_reply < <(compgen -d -- "$2")',
        "            while IFS= read -r f; do",
        "                [[ -d $f ]] && continue",
        "                case ${f##*/} in",
        f'                    {log_case}) COMPREPLY+=("$f") ;;',
        "                esac",
        '            done < <(compgen -f -- "$2") ;;',
        "    esac",
        "}",
        "",
        "# _quorumctl_reply: add the lines of stdin to COMPREPLY (no word splitting or globbing)",
        "_quorumctl_reply() {",
        "    local line",
        '    while IFS= read -r line; do COMPREPLY+=("$line"); done',
        "}",
        "",
        "_quorumctl() {",
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
        "    local path='' subs opts vopts w i=1",
        "    COMPREPLY=()",
        "    _quorumctl_spec ''",
        "    # the command path so far: sub-command names, skipping options and their values",
        "    while (( i < COMP_CWORD )); do",
        "        w=${COMP_WORDS[i]}",
        '        if [[ " $vopts " == *" $w "* ]]; then',
        "            i=$((i + 1))",
        "            # --opt=value: COMP_WORDBREAKS makes '=' a word of its own",
        "            [[ ${COMP_WORDS[i]} == = ]] && i=$((i + 1))",
        '        elif [[ $w != -* && " $subs " == *" $w "* ]]; then',
        "            path=${path:+$path }$w",
        '            _quorumctl_spec "$path"',
        "        fi",
        "        i=$((i + 1))",
        "    done",
        '    if [[ $cur == = && " $vopts " == *" $prev "* ]]; then',
        '        _quorumctl_values "$path" "$prev" \'\'',
        '    elif [[ $prev == = && " $vopts " == *" ${COMP_WORDS[COMP_CWORD-2]} "* ]]; then',
        '        _quorumctl_values "$path" "${COMP_WORDS[COMP_CWORD-2]}" "$cur"',
        '    elif [[ " $vopts " == *" $prev "* ]]; then',
        '        _quorumctl_values "$path" "$prev" "$cur"',
        "    elif [[ $cur == -* ]]; then",
        '        _quorumctl_reply < <(compgen -W "$opts" -- "$cur")',
        "    elif [[ -n $subs ]]; then",
        '        _quorumctl_reply < <(compgen -W "$subs" -- "$cur")',
        "    else",
        '        _quorumctl_values "$path" \'\' "$cur" || _quorumctl_reply < <(compgen -W "$opts" -- "$cur")',
        "    fi",
        "    return 0",
        "}",
        "",
        "complete -F _quorumctl quorumctl",
    ]
    return "\n".join(out) + "\n"


# -- zsh ---------------------------------------------------------------------------------

def _zfunc(c: Cmd) -> str:
    return "_quorumctl" + "".join("_" + re.sub(r"\W", "_", p) for p in c.path)


def _zdesc(text: str) -> str:
    return re.sub(r"([\\\[\]:])", r"\\\1", text)


def _zaction(p: Param) -> str:
    msg = _zdesc(p.metavar)
    if p.words:
        return f"{msg}:({' '.join(p.words)})"
    return msg + ":" + {"dir": "_files -/", "file": "_files", "log": "_quorumctl_log_files", None: " "}[p.files]


def _zoption(p: Param) -> list[str]:
    desc = "[" + _zdesc(p.help) + "]"
    action = (":" + _zaction(p)) if p.takes_value else ""
    # --opt= : the value may follow as the next word or after "=", as click accepts
    names = [n + ("=" if p.takes_value and n.startswith("--") else "") for n in p.names]
    if p.repeatable:
        return [_sq(f"*{n}{desc}{action}") for n in names]
    if len(names) == 1:
        return [_sq(f"{names[0]}{desc}{action}")]
    excl = "(" + " ".join(p.names) + ")"
    return [_sq(excl) + "{" + ",".join(names) + "}" + _sq(desc + action)]


def zsh_script(tree: Cmd) -> str:
    pattern = "(" + "|".join(name_patterns()) + ")"
    out = [
        "#compdef quorumctl",
        "# zsh completion for quorumctl.",
        "# Generated by `python -m quorumctl.cli.generate` from the Typer app: do not edit.",
        "#",
        "# Install: copy it as _quorumctl into a directory of $fpath (before compinit),",
        "# or `source` it after compinit. Static on purpose: see quorumctl/cli/generate.py.",
        "",
        "# directories, and the files of a Kafka log dir",
        "_quorumctl_log_files() {",
        f"  _files -g {_sq(pattern + '(-.)')}",
        "}",
    ]
    for c in tree.walk():
        out.append("")
        out.append(f"{_zfunc(c)}() {{")
        specs = [s for p in c.options for s in _zoption(p)]
        if c.subcommands:
            out.append("  local curcontext=$curcontext state state_descr line")
            out.append("  typeset -A opt_args")
            specs += [_sq("1:command:->command"), _sq("*::argument:->argument")]
            out.append("  _arguments -C -s -S : \\")
        else:
            for a in c.arguments:
                spec = ("*" if a.repeatable else "" if a.required else ":") + ":" + _zaction(a)
                specs.append(_sq(spec))
            out.append("  _arguments -s -S : \\")
        out.extend(f"    {s} \\" for s in specs[:-1])
        out.append(f"    {specs[-1]}")
        if c.subcommands:
            out.append("  case $state in")
            out.append("    command)")
            out.append("      local -a commands=(")
            for s in c.subcommands:
                out.append(f"        {_sq(s.path[-1] + ':' + s.summary)}")
            out.append("      )")
            out.append(f"      _describe -t commands {_sq(c.name + ' command')} commands ;;")
            out.append("    argument)")
            out.append("      case $words[1] in")
            for s in c.subcommands:
                out.append(f"        {s.path[-1]}) {_zfunc(s)} ;;")
            out.append("      esac ;;")
            out.append("  esac")
        out.append("}")
    out += [
        "",
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
        '  _quorumctl "$@"',
        "else",
        "  compdef _quorumctl quorumctl",
        "fi",
    ]
    return "\n".join(out) + "\n"


# -- fish --------------------------------------------------------------------------------

def fish_script(tree: Cmd) -> str:
    out = [
        "# fish completion for quorumctl.",
        "# Generated by `python -m quorumctl.cli.generate` from the Typer app: do not edit.",
        "#",
        "# Install: copy it to ~/.config/fish/completions/quorumctl.fish.",
        "# Static on purpose: see quorumctl/cli/generate.py.",
        "",
        "# the sub-commands, and the options that take a value, of a command path",
        "function __quorumctl_subs",
        "    switch $argv[1]",
    ]
    for c in tree.walk():
        if c.subcommands:
            out.append(f"        case {_sq(' '.join(c.path))}")
            out.append("            printf '%s\\n' " + " ".join(s.path[-1] for s in c.subcommands))
    out += ["    end", "end", "", "function __quorumctl_vopts", "    switch $argv[1]"]
    for c in tree.walk():
        vopts = [n for p in c.options if p.takes_value for n in p.names]
        if vopts:
            out.append(f"        case {_sq(' '.join(c.path))}")
            out.append("            printf '%s\\n' -- " + " ".join(vopts))
    out += [
        "    end",
        "end",
        "",
        "# the command path so far (\"describe status\"), skipping options and their values",
        "function __quorumctl_path",
        "    set -l path",
        "    set -l skip 0",
        "    for t in (commandline -opc)[2..-1]",
        "        if test $skip = 1",
        "            set skip 0",
        "        else if string match -q -- '-*' $t",
        '            contains -- $t (__quorumctl_vopts "$path"); and set skip 1',
        '        else if contains -- $t (__quorumctl_subs "$path")',
        "            set -a path $t",
        "        end",
        "    end",
        '    echo "$path"',
        "end",
        "",
        "function __quorumctl_at",
        '    test (__quorumctl_path) = "$argv[1]"',
        "end",
        "",
        "# directories, and the files of a Kafka log dir",
        "function __quorumctl_log_files",
        "    for f in (commandline -ct)*",
        "        if test -d $f",
        "            echo $f/",
        "        else",
        "            switch (string replace -r '.*/' '' -- $f)",
        "                case " + " ".join(_sq(p) for p in name_patterns()),
        "                    echo $f",
        "            end",
        "        end",
        "    end",
        "end",
        "",
        "complete -c quorumctl -f",
    ]
    for c in tree.walk():
        cond = f"-n {_sq('__quorumctl_at ' + _sq(' '.join(c.path)))}"
        for s in c.subcommands:
            out.append(f"complete -c quorumctl {cond} -a {s.path[-1]} -d {_sq(s.summary)}")
        for p in c.params:
            parts = ["complete -c quorumctl", cond]
            if not p.argument:
                for n in p.names:
                    parts.append(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}")
            if p.takes_value:
                # -r: the option's value, with fish's own file completion; -x: the same without files
                if not p.argument:
                    parts.append("-r" if p.files == "file" else "-x")
                if p.words:
                    parts.append(f"-a {_sh_words(p.words)}")
                elif p.files == "file" and p.argument:
                    parts.append("-F")
                elif p.files == "dir":
                    parts.append("-a '(__fish_complete_directories (commandline -ct) \"\")'")
                elif p.files == "log":
                    parts.append("-a '(__quorumctl_log_files)'")
                elif p.argument:
                    continue   # nothing to offer for a free-form argument
            if not p.argument:
                parts.append(f"-d {_sq(p.help)}")
            out.append(" ".join(parts))
    return "\n".join(out) + "\n"


# -- man page ----------------------------------------------------------------------------

def roff(text: str) -> str:
    """Text for groff: backslashes and hyphens escaped, non-ASCII as \\[uXXXX]."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join(("\\&" + ln if ln[:1] in (".", "'") else ln) for ln in text.split("\n"))


def _fill(text: str) -> str:
    """A paragraph as one line per sentence-ish chunk (groff fills it)."""
    return roff(" ".join(text.split()))


def _literal(lines: list[str]) -> list[str]:
    out = [".EX"]
    for ln in lines:
        ln = ln.expandtabs(8).rstrip()
        out.append(roff(ln) if ln else "\\&")
    out.append(".EE")
    return out


def _help_block(help_text: str) -> list[str]:
    out = []
    for i, para in enumerate(paragraphs(help_text)):
        if para.startswith("Example:"):
            out += [".PP", "Example:", ".RS 4"] + _literal([para[len("Example:"):].strip()]) + [".RE"]
        else:
            if i:
                out.append(".PP")
            out.append(_fill(para))
    return out


def _synopsis(c: Cmd) -> str:
    args = []
    for a in c.arguments:
        args.append(f"\\fI{roff(a.metavar)}\\fR" if a.required else f"[\\fI{roff(a.metavar)}\\fR]")
    tail = " \\fIcommand\\fR ..." if c.subcommands else ""
    return f"\\fB{roff(c.name)}\\fR [\\fIoptions\\fR]{tail}" + "".join(" " + a for a in args)


def _param_item(p: Param) -> list[str]:
    if p.argument:
        head = f"\\fI{roff(p.metavar)}\\fR"
    else:
        names = ", ".join(f"\\fB{roff(n)}\\fR" for n in p.names)
        head = names + (f" \\fI{roff(p.metavar)}\\fR" if p.takes_value else "")
    notes = []
    if p.required:
        notes.append("Required.")
    if p.default is not None:
        notes.append(f"Default: {p.default}.")
    if p.repeatable and not p.argument and "repeat" not in p.help:
        notes.append("Repeatable.")
    return [".TP", head, _fill(" ".join([p.help] + notes))]


@dataclass
class Run:
    argv: list[str]           # what ran, after "quorumctl"
    shown: list[str]          # the command line printed (the simulated quorum's address replaced)
    output: str
    code: int


@dataclass
class Example:
    title: str
    runs: list[Run]


def man_page(tree: Cmd, examples: list[Example]) -> str:
    out = [
        '.\\" Generated by `python -m quorumctl.cli.generate` from the Typer app: do not edit.',
        f'.TH QUORUMCTL 1 {MAN_DATE} "quorumctl {__version__}" "User Commands"',
        ".nh", ".ad l",   # no hyphenation (names and options must read as typed), ragged right
        ".SH NAME",
        "quorumctl \\- operator toolkit for Apache Kafka's KRaft metadata quorum",
        ".SH SYNOPSIS",
        ".nf",
    ]
    for c in tree.walk():
        if not c.subcommands or not c.path:
            out.append(_synopsis(c))
    out += [".fi", ".SH DESCRIPTION"]
    out += [p for p in _help_block(tree.help)]
    out += [
        ".PP",
        _fill("Live commands (describe, add-controller, remove-controller) speak the Kafka protocol to "
              "brokers or controllers, as Kafka's kafka-metadata-quorum.sh does. Offline commands "
              "(dump-log, verify, state, truncate, bootstrap, spark-export) read a log dir's files and "
              "need no running Kafka; truncate and bootstrap format only write with --apply, and "
              "refuse while Kafka holds the log dir's .lock."),
        ".PP",
        _fill("-o, --output selects text (Kafka's own format where Kafka has the command; the default "
              "when standard output is not a terminal), table (the default on a terminal) or json "
              "(JSON Lines for dump-log). Errors are one line on standard error, "
              "\"quorumctl: error: ...\"; --debug adds the traceback."),
        ".SH OPTIONS",
    ]
    for p in tree.params:
        out += _param_item(p)
    out.append(".SH COMMANDS")
    for c in tree.walk():
        if not c.path:
            continue
        out.append(f'.SS "{roff(c.name)}"')
        out += _help_block(c.help)
        if c.subcommands:
            out += [".PP", "Commands: " + ", ".join(f"\\fB{roff(s.name)}\\fR" for s in c.subcommands) + "."]
            continue
        for p in c.arguments + c.options:
            out += _param_item(p)
    out += [".SH EXIT STATUS", ".TP", str(EXIT_OK), "Success: the command did what was asked and found nothing wrong.",
            ".TP", str(EXIT_PROBLEMS),
            _fill("The command worked and found a problem: corruption (verify, dump-log), an unhealthy "
                  "quorum (describe health), a replica with problems (state), a change the quorum "
                  "refused (add-controller, remove-controller), a refused truncation, or a "
                  "misformatted log dir (bootstrap info)."),
            ".TP", str(EXIT_INPUT),
            _fill("Usage or input error: a bad option, a missing or undecodable file (named with the "
                  "position and what was expected)."),
            ".TP", str(EXIT_UNREACHABLE),
            _fill("The cluster could not be reached, or refused the connection or authentication."),
            ".TP", "130", "Interrupted (Ctrl-C)."]
    out += [".SH ENVIRONMENT",
            ".TP", "\\fBCOLUMNS\\fR, \\fBNO_COLOR\\fR",
            _fill("Width and colour of table output (Rich)."),
            ".TP", "\\fBJAVA_HOME\\fR",
            _fill("The Java that spark-export starts Spark with (else java on PATH)."),
            ".TP", "\\fBPYSPARK_PYTHON\\fR",
            _fill("The Python of spark-export's Spark workers (default: the one running quorumctl)."),
            ".TP", "\\fB_QUORUMCTL_COMPLETE\\fR",
            _fill("Set by the completion that --install-completion installs, to ask quorumctl for "
                  "completions; the static scripts below do not use it.")]
    out += [".SH SHELL COMPLETION",
            _fill("The source tree's completions/ directory holds static scripts generated from the "
                  "commands above; they offer sub-commands, options, choices, record types, and for "
                  "paths the directories and the files Kafka keeps in a log dir:"),
            ".PP", ".RS 4"]
    out += _literal(["source completions/quorumctl.bash          # bash, e.g. from ~/.bashrc",
                     "cp completions/quorumctl.zsh ~/.zfunc/_quorumctl   # zsh: a directory of $fpath",
                     "cp completions/quorumctl.fish ~/.config/fish/completions/"])
    out += [".RE", ".PP",
            _fill("quorumctl --install-completion installs click's dynamic completion for the current "
                  "shell instead.")]
    out += [".SH EXAMPLES",
            _fill("Real output, produced when this page was generated: the offline commands ran on log "
                  "dirs c1, c2 and c3 of one quorum written by quorumctl's own writer (c3 holds two "
                  "entries of an old leader), and the describe commands against a simulated quorum "
                  "(quorumctl.testing, as in quorumctl demo) whose controllers advertise controller-N:9093.")]
    for ex in examples:
        body = []
        for run in ex.runs:
            body += ["$ " + " ".join(["quorumctl"] + run.shown)] + run.output.rstrip("\n").split("\n")
            if run.code:
                body += ["$ echo $?", str(run.code)]
        out += [".PP", _fill(ex.title), ".RS 4"] + _literal(body) + [".RE"]
    out += [".SH SEE ALSO",
            _fill("kafka-metadata-quorum.sh, kafka-dump-log.sh and kafka-storage.sh in Apache Kafka's "
                  "bin/ directory, whose output quorumctl's text mode follows; KIP-595 (the Raft "
                  "protocol of the metadata quorum) and KIP-853 (dynamic quorums); README.md and docs/ "
                  "in the quorumctl source tree.")]
    for ln in out:
        assert ln == ln.rstrip(), f"trailing whitespace in {ln!r}"
    return "\n".join(out) + "\n"


# -- examples: real runs on deterministic inputs -----------------------------------------

DIRECTORY_IDS = {1: "vM4r05tlq6jyNP9GGDz25Q", 2: "YtKWUuh0Cg3on7MxBgUQWA", 3: "lwoe0T371QW1ZZOn9NBD_A"}


def _write_replicas(work: str) -> None:
    """Three replicas of one quorum: c1 the leader (with a snapshot), c2 a follower one
    batch behind, c3 with two entries an old leader of epoch 2 never committed."""
    from ..storage.synth import B, write_replica
    common = [B(1, 2), B(1), B(2, 3), B(3, 2)]
    write_replica(os.path.join(work, "c1"), common + [B(3)], node_id=1, directory_id=DIRECTORY_IDS[1],
                  snapshots=[(5, 2)])
    write_replica(os.path.join(work, "c2"), common, node_id=2, directory_id=DIRECTORY_IDS[2])
    write_replica(os.path.join(work, "c3"), common[:3] + [B(2, 2, tag="x")], node_id=3,
                  directory_id=DIRECTORY_IDS[3])
    # a copy of c2 with one flipped byte in its third batch's records, for verify
    import shutil
    shutil.copytree(os.path.join(work, "c2"), os.path.join(work, "c2-copy"))
    seg = os.path.join(work, "c2-copy", "__cluster_metadata-0", "00000000000000000000.log")
    data = bytearray(Path(seg).read_bytes())
    data[300] ^= 0x01
    Path(seg).write_bytes(bytes(data))


def _simulated_quorum():
    """A still, 3-voter quorum (leader 1, epoch 3) with fixed timestamps, whose
    controllers advertise controller-N:9093; only controller 1 listens (on loopback)."""
    from ..storage.synth import T0
    from ..testing.scenarios import DEMO_CLUSTER_ID, DEMO_DIRECTORY_IDS
    from ..testing.sim import SimulatedCluster, node, replica
    leo, lag = 1207, {1: 0, 2: 143, 3: 171, 4: 208}
    voters = [replica(i, leo - (i == 3) * 12, T0 - lag[i], T0 - lag[i], DEMO_DIRECTORY_IDS[i]) for i in (1, 2, 3)]
    observers = [replica(4, leo, T0 - lag[4], T0 - lag[4], DEMO_DIRECTORY_IDS[4])]
    nodes = [node(i, ("CONTROLLER", f"controller-{i}", 9093)) for i in (1, 2, 3)]
    c = SimulatedCluster(DEMO_CLUSTER_ID, leader_id=1, leader_epoch=3, high_watermark=leo, voters=voters,
                         observers=observers, nodes=nodes)
    c.add_controller(1)
    return c.start()


def _run(work: str, argv: list[str]) -> tuple[str, int]:
    import quorumctl
    env = {k: v for k, v in os.environ.items() if not k.startswith("_QUORUMCTL")}
    env.update(COLUMNS="80", NO_COLOR="1", TERM="dumb", LC_ALL="C.UTF-8", TZ="UTC",
               PYTHONPATH=str(Path(quorumctl.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, "-m", "quorumctl", *argv], cwd=work, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return r.stdout, r.returncode


def examples() -> list[Example]:
    out = []
    with tempfile.TemporaryDirectory(prefix="quorumctl-man-") as work:
        _write_replicas(work)
        cluster = _simulated_quorum()
        try:
            addr = cluster.controllers()[0].address
            for title, runs in [
                ("The quorum, as kafka-metadata-quorum.sh describe --status shows it:",
                 [["describe", "status", "--bootstrap-controller", addr]]),
                ("Every replica's lag (controller 3 is 12 records behind):",
                 [["describe", "replication", "--bootstrap-controller", addr]]),
                ("Check a replica's files, then a copy of one with a flipped byte:",
                 [["verify", "c1"], ["verify", "c2-copy"]]),
                ("Which replica wins an election, and where the others diverge (the last lines):",
                 [["state", "c1", "c2", "c3"]]),
                ("Plan the truncation of the diverged replica (a dry run; --apply does it):",
                 [["truncate", "c3", "--reference", "c1", "--backup-dir", "backup"]]),
                ("Decode the metadata records of a segment, as kafka-dump-log.sh does:",
                 [["dump-log", "--cluster-metadata-decoder", "--skip-record-metadata", "--offset-end", "2",
                   "c1/__cluster_metadata-0/00000000000000000000.log"]]),
                ("What formatting a new node's log dir would write (a dry run):",
                 [["bootstrap", "format", "--cluster-id", "XFBpci3ORzK2hz44Gtmrwg", "--node-id", "4",
                   "--log-dir", "data", "--release-version", "3.9"]]),
            ]:
                done = []
                for argv in runs:
                    text, code = _run(work, argv)
                    assert addr not in text, f"the simulated quorum's address is in the output: {text}"
                    if argv[0] == "state":
                        # from the verdict on: "last batch written" above it ages with the clock
                        lines = text.splitlines()
                        start = next(i for i, ln in enumerate(lines) if ln.startswith("Most up to date"))
                        text = "\n".join(["..."] + lines[start:]) + "\n"
                    done.append(Run(argv, [("controller-1:9093" if a == addr else a) for a in argv], text, code))
                out.append(Example(title, done))
        finally:
            cluster.stop()
    return out


# -- main --------------------------------------------------------------------------------

def generate(out_dir: Path) -> list[Path]:
    """Write completions/ and man/ under out_dir; returns the files written."""
    tree = command_tree()
    files = {
        "completions/quorumctl.bash": bash_script(tree),
        "completions/quorumctl.zsh": zsh_script(tree),
        "completions/quorumctl.fish": fish_script(tree),
        "man/quorumctl.1": man_page(tree, examples()),
    }
    written = []
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(prog="python -m quorumctl.cli.generate", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=repo, help=f"where completions/ and man/ go (default: {repo})")
    args = ap.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
