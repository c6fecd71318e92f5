"""Programs that run a script in their own language: ``sqlite3``, ``ed``, ``ex`` (``vim -e``).

The script comes from the arguments (SQL and dot-commands after the database, ``-cmd``) or
from the input, which the analysis sees when it is a here-document, a here-string or the
literal output of ``echo`` / ``printf``. Commands in it read and write files
(``.output FILE``, ``ATTACH 'FILE'``, ``VACUUM INTO``, ``writefile()``, ed's ``w FILE``,
ex's ``:w FILE``) and run programs (``.shell``, ``.system``, ``|cmd``, ``load_extension``,
``!cmd``). Literal names are reported as file effects, the programs as shell text for the
deny and ask rules; names computed at run time cannot be checked (``into /``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pegboard_permissions_shell.effects import FAMILIES, Effects, Ref, family, vim_commands


@dataclass
class Script:
    """What a script does: files it reads and writes, shell commands it runs, other code it runs."""

    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    runs: str | None = None  # runs code the analysis cannot read (an extension, an editor, a script file)
    hidden: str | None = None  # reads or writes files named at run time

    def effects_into(self, e: Effects) -> None:
        e.reads = [*e.reads, *((-1, p) for p in self.reads if p)]
        e.writes = [*e.writes, *((-1, p) for p in self.writes if p)]
        if self.commands:
            e.runs_program = e.runs_program or "the script runs shell commands"
        if self.runs:
            e.runs_program = e.runs_program or self.runs
        if self.hidden:
            e.into = [*e.into, (-1, "/")]
            e.side_effect = e.side_effect or self.hidden


_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|(\S+)')


def _tokens(line: str) -> list[str]:
    return [m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
            for m in _TOKEN.finditer(line)]


# -- sqlite3 --------------------------------------------------------------------------------

_SQL_STRING = r"'((?:[^']|'')*)'|\"((?:[^\"]|\"\")*)\""
_ATTACH = re.compile(r"\bATTACH\s+(?:DATABASE\s+)?(?:" + _SQL_STRING + r"|([\w./-]+)(?=\s+AS\b)|\S+)", re.I)
_VACUUM_INTO = re.compile(r"\bVACUUM\b[^;]*?\bINTO\s+(?:" + _SQL_STRING + r"|\S+)", re.I)
_FILE_FUNCS = re.compile(r"\b(?P<func>readfile|writefile|fsdir|zipfile|load_extension|edit)\s*\(\s*(?:"
                         + _SQL_STRING + r")?", re.I)
_SQLITE_NOT_FILES = frozenset({"", ":memory:", "stdout", "stderr", "off", "on"})


def _db_path(name: str) -> str:
    """A database name as a path: ``file:`` URIs lose their scheme and query."""
    if name.lower().startswith("file:"):
        name = re.split(r"[?#]", name[5:], maxsplit=1)[0]
        if name.startswith("//"):
            name = "/" + name[2:].partition("/")[2]
    return name


def _literal(m: re.Match[str]) -> str | None:
    """The text of the SQL string a match found ('x' or "x", which SQLite also takes as a string)."""
    if m.group(1) is not None:
        return m.group(1).replace("''", "'")
    if m.group(2) is not None:
        return m.group(2).replace('""', '"')
    return m.group(3) if m.re.groups >= 3 else None


def _sql(text: str, s: Script) -> None:
    for m in _ATTACH.finditer(text):
        literal = _literal(m)
        if literal is not None:
            path = _db_path(literal)
            if path not in _SQLITE_NOT_FILES:
                s.reads.append(path)
                s.writes.append(path)
        else:
            s.hidden = s.hidden or "ATTACH names a database at run time"
    for m in _VACUUM_INTO.finditer(text):
        literal = _literal(m)
        if literal is not None:
            s.writes.append(_db_path(literal))
        else:
            s.hidden = s.hidden or "VACUUM INTO names a file at run time"
    for m in _FILE_FUNCS.finditer(text):
        func = m.group("func").lower()
        literal = m.group(2) if m.group(2) is not None else m.group(3)
        if func in ("load_extension", "edit"):
            s.runs = s.runs or f"{func}() runs code"
            continue
        if literal is None:
            s.hidden = s.hidden or f"{func}() names a file at run time"
            continue
        path = literal.replace("''", "'").replace('""', '"')
        if func == "writefile":
            s.writes.append(path)
        else:
            s.reads.append(path)


def _pipe_or_file(arg: str, s: Script, write: bool, rest: str) -> None:
    if arg.startswith("|"):
        s.commands.append(rest.split("|", 1)[1].strip())
    elif arg and arg not in _SQLITE_NOT_FILES:
        (s.writes if write else s.reads).append(arg)


def _dot_command(line: str, s: Script) -> None:
    words = _tokens(line)
    if not words:
        return
    cmd, args = words[0][1:].lower(), words[1:]
    plain = [a for a in args if not a.startswith("-")]
    if cmd in ("shell", "system"):
        s.commands.append(line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "")
    elif cmd in ("output", "once", "log", "trace", "iotrace"):
        if any(a in ("-x", "-e") for a in args):
            s.runs = s.runs or f".{cmd} -x / -e opens another program"
        if plain:
            _pipe_or_file(plain[0], s, True, line)
    elif cmd in ("read", "import"):
        if plain:
            _pipe_or_file(plain[0], s, False, line)
    elif cmd in ("backup", "save", "clone"):
        if plain:
            s.writes.append(plain[-1])
    elif cmd == "restore":
        if plain:
            s.reads.append(plain[-1])
    elif cmd == "open":
        if plain:
            s.reads.append(_db_path(plain[-1]))
            s.writes.append(_db_path(plain[-1]))
    elif cmd in ("load", "excel"):
        s.runs = s.runs or f".{cmd} runs code"
    elif cmd in ("cd", "archive", "ar", "testcase"):
        s.hidden = s.hidden or f".{cmd} reads or writes files the analysis cannot name"


def sqlite_script(text: str) -> Script:
    """What a sqlite3 script (dot-commands and SQL) does."""
    s = Script()
    sql: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("."):
            _dot_command(line.strip(), s)
        else:
            sql.append(line)
    if sql:
        _sql("\n".join(sql), s)
    return s


_SQLITE_VALUED = frozenset({"init", "cmd", "separator", "newline", "nullvalue", "vfs", "mmap", "maxsize", "escape",
                            "nonce", "A"})
_SQLITE_TWO_VALUES = frozenset({"lookaside", "pagecache", "heap"})
_SQLITE_FLAGS = frozenset({
    "append", "ascii", "bail", "batch", "box", "column", "csv", "deserialize", "echo", "header", "noheader", "help",
    "html", "interactive", "json", "line", "list", "markdown", "memtrace", "nofollow", "no-rowid-in-view", "quote",
    "readonly", "safe", "stats", "table", "tabs", "unsafe-testing", "utf8", "version", "zip", "pcachetrace",
    "multiplex", "hexkey", "key", "textkey", "ifexists",
})


@dataclass
class SqliteCall:
    db: Ref | None
    sql: list[str]  # SQL and dot-commands from the arguments (operands after the database, -cmd)
    unknown: str | None
    init: Ref | None
    readonly: bool


def sqlite_call(args: list[str]) -> SqliteCall:
    db: Ref | None = None
    sql: list[str] = []
    unknown: str | None = None
    init: Ref | None = None
    readonly = False
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1 and a != "--":
            name = a.lstrip("-")
            value = args[i + 1] if i + 1 < len(args) else None
            if name in _SQLITE_VALUED:
                if name == "cmd" and value is not None:
                    sql.append(value)
                if name == "init" and value is not None:
                    init = (i + 1, value)
                if name == "A":
                    sql.append(".archive " + " ".join(args[i + 1:]))
                    break
                i += 2
                continue
            if name in _SQLITE_TWO_VALUES:
                i += 3
                continue
            if name == "readonly":
                readonly = True
            elif name not in _SQLITE_FLAGS:
                unknown = unknown or a
            i += 1
            continue
        if db is None:
            db = (i, a)
        else:
            sql.append(a)
        i += 1
    return SqliteCall(db, sql, unknown, init, readonly)


@family("sqlite3", "sqlite")
def _sqlite3(args: list[str]) -> Effects:
    call = sqlite_call(args)
    e = Effects(side_effect="sqlite3 can change its database")
    if call.db is not None and _db_path(call.db[1]) not in _SQLITE_NOT_FILES:
        path = _db_path(call.db[1])
        ref = call.db if path == call.db[1] else (-1, path)
        e.reads.append(ref)
        if not call.readonly and "mode=ro" not in call.db[1]:
            e.writes = [ref]
    if call.unknown:
        e.opaque = f"sqlite3 {call.unknown} is not in the table"
    if call.init is not None:
        e.reads.append(call.init)
        e.opaque = e.opaque or "sqlite3 -init runs the commands of a file"
    for text in call.sql:
        sqlite_script(text).effects_into(e)
    return e


def sqlite_commands(args: list[str]) -> list[str]:
    out: list[str] = []
    for text in sqlite_call(args).sql:
        out += sqlite_script(text).commands
    return out


def sqlite_input(args: list[str], text: str | None) -> Script | None:
    """What sqlite3 does with its input: a script when SQL is not in the arguments."""
    call = sqlite_call(args)
    if call.sql:
        return None
    if text is None:
        return Script(hidden="sqlite3 runs the commands its input holds, which the analysis cannot see")
    return sqlite_script(text)


# -- ed -------------------------------------------------------------------------------------

_ED_ADDRESS = re.compile(r"""^\s*(?:[0-9.$,;+\-\s]|'[a-z]|/(?:[^/\\]|\\.)*/?|\?(?:[^?\\]|\\.)*\??)*""")


def ed_script(text: str) -> Script:
    """What an ed script does: ``w FILE`` / ``W`` / ``wq`` write, ``r`` / ``e`` read, ``!cmd`` runs."""
    s = Script()
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        body = line[_ED_ADDRESS.match(line).end():]  # type: ignore[union-attr]
        _ed_command(body, s)
        if body[:1] in ("a", "i", "c") and body[1:].strip() in ("", "p", "l", "n"):
            while k < len(lines) and lines[k] != ".":
                k += 1  # text being added, not commands
            k += 1
    return s


def _ed_command(body: str, s: Script) -> None:
    if not body:
        return
    letter, rest = body[0], body[1:]
    if letter == "!":
        s.commands.append(rest)
    elif letter in ("w", "W"):
        arg = rest[1:] if rest.startswith("q") else rest
        arg = arg.strip()
        if arg.startswith("!"):
            s.commands.append(arg[1:])
        elif arg:
            s.writes.append(arg)
    elif letter in ("r", "e", "E", "f"):
        arg = rest.strip()
        if arg.startswith("!"):
            s.commands.append(arg[1:])
        elif arg:
            s.reads.append(arg)
            if letter != "r":
                s.writes.append(arg)  # the file later 'w' commands write
    elif letter in ("g", "v", "G", "V") and rest:
        delim = rest[0]
        parts = rest[1:].split(delim, 1)
        if len(parts) == 2:
            _ed_command(parts[1].lstrip(), s)


@family("ed", "red")
def _ed(args: list[str]) -> Effects:
    e = Effects(side_effect="ed edits files")
    files: list[Ref] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-p":
            i += 2
            continue
        if a.startswith("!") and a != "!":
            e.runs_program = "ed reads the output of a shell command"
        elif (not a.startswith("-") or a == "-") and a != "-":
            files.append((i, a))
        i += 1
    e.reads = files
    e.writes = list(files)
    return e


def ed_commands(args: list[str]) -> list[str]:
    return [a[1:] for a in args if a.startswith("!") and a != "!"]


def ed_input(args: list[str], text: str | None) -> Script | None:
    if text is None:
        return Script(hidden="ed runs the commands its input holds, which the analysis cannot see")
    return ed_script(text)


# -- ex (vim -e / -es) ------------------------------------------------------------------------

_EX_RANGE = re.compile(r"""^[\s:]*(?:[0-9.$%,;+\-\s]|'[a-z<>]|/(?:[^/\\]|\\.)*/|\?(?:[^?\\]|\\.)*\?)*""")
_EX_WRITE = re.compile(r"^(?:w(?:r(?:i(?:te?)?)?)?|wq|x(?:it?)?|exi(?:t)?|sav(?:e(?:as?)?)?|up(?:d(?:a(?:te?)?)?)?"
                       r"|wn(?:e(?:xt?)?)?|wa(?:ll?)?|mks(?:e(?:s(?:s(?:i(?:on?)?)?)?)?)?|mkv(?:i(?:m(?:rc?)?)?)?"
                       r"|mk(?:e(?:x(?:rc?)?)?)?|wv(?:i(?:m(?:i(?:n(?:fo?)?)?)?)?)?|wsh(?:ada?)?)!?$")
_EX_READ = re.compile(r"^(?:r(?:e(?:ad?)?)?|e(?:d(?:it?)?)?|vi(?:s(?:u(?:al?)?)?)?|sp(?:l(?:it?)?)?|new|vs(?:p(?:l"
                      r"(?:it?)?)?)?|vne(?:w)?|tabe(?:d(?:it?)?)?|tabnew|ar(?:gs?)?|n(?:e(?:xt?)?)?|badd?|o(?:pen?)?"
                      r"|fin(?:d)?)!?$")
_EX_CODE = re.compile(r"^(?:so(?:u(?:r(?:ce?)?)?)?|ru(?:n(?:t(?:i(?:me?)?)?)?)?|py(?:t(?:h(?:on?)?)?)?3?|pyx?|"
                      r"pyf(?:ile)?|py3f(?:ile)?|lua(?:file)?|luado|pe(?:r(?:l?)?)?|perld(?:o)?|rub(?:y)?|rubyd(?:o)?|"
                      r"rubyf(?:ile)?|mz(?:scheme)?|tcl|tcld(?:o)?|tclf(?:ile)?|exe(?:c(?:u(?:te?)?)?)?|norm(?:al?)?|"
                      r"ter(?:m(?:i(?:n(?:al?)?)?)?)?|mak(?:e)?|lmak(?:e)?|gr(?:ep?)?|lgr(?:ep?)?|diffp(?:a(?:t(?:ch?)?)?)?"
                      r"|redi(?:r)?|cd|lcd|chd(?:ir)?|lch(?:dir)?|tcd|lua|argdo|bufdo|windo|tabdo|cdo|cfdo|ldo|lfdo"
                      r"|let|cal(?:l)?|ec(?:ho)?|au(?:tocmd)?|com(?:mand)?|fu(?:nction)?|vim(?:grep)?|lv(?:imgrep)?)!?$")


def ex_script(text: str) -> Script:
    """What an ex script does: ``:w FILE`` writes, ``:r FILE`` reads, ``:!cmd`` runs, and
    commands that run code or change directory (``:source``, ``:py``, ``:exe``, ``:cd`` ...)."""
    s = Script()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith('"'):
            continue
        for part in _ex_split(line):
            _ex_command(part, s)
    return s


def _ex_split(line: str) -> list[str]:
    """``:w a | q``: the commands of one line (``!cmd``, ``w !cmd`` and ``:g`` take the rest, bars included)."""
    out: list[str] = []
    while line:
        body = line[_EX_RANGE.match(line).end():]  # type: ignore[union-attr]
        m = re.match(r"([A-Za-z]*)!?\s*(.*)$", body, re.S)
        word, arg = (m.group(1), m.group(2)) if m else ("", body)
        if body.startswith("!") or arg.startswith("!") or word in ("g", "global", "v", "vglobal", "norm", "normal"):
            out.append(body)
            break
        head, bar, tail = body.partition("|")
        out.append(head)
        line = tail if bar else ""
    return out


def _ex_command(body: str, s: Script) -> None:
    body = body.strip()
    if not body:
        return
    if body.startswith("!"):
        s.commands.append(body[1:])
        return
    m = re.match(r"([A-Za-z]+!?)\s*(.*)$", body, re.S)
    if m is None:
        s.runs = s.runs or f"ex command {body[:20]!r} is not in the table"
        return
    word, arg = m.group(1), m.group(2).strip()
    name = word.rstrip("!")
    if arg.startswith(">>"):
        arg = arg[2:].strip()
    if name in ("g", "gl", "glo", "glob", "globa", "global", "v", "vg", "vglobal") and arg:
        delim = arg[0]
        parts = arg[1:].split(delim, 1)
        if len(parts) == 2:
            _ex_command(parts[1], s)
        return
    if arg.startswith("!") and (_EX_WRITE.match(word) or _EX_READ.match(word)):
        s.commands.append(arg[1:])
        return
    if _EX_WRITE.match(word):
        if arg:
            s.writes.append(arg)
    elif _EX_READ.match(word):
        if arg:
            s.reads.append(arg)
            s.writes.append(arg)
    elif _EX_CODE.match(word):
        if name.startswith(("cal", "ec", "let")) and "system(" not in arg and "writefile(" not in arg:
            return
        s.runs = s.runs or f"ex :{name} runs code or changes directory"
        s.commands += [x.group(1) for x in re.finditer(r"system\s*\(\s*[\"']([^\"']*)[\"']", arg)]


def ex_mode(name: str, args: list[str]) -> bool:
    """Whether vim reads ex commands from its input (``ex``, ``vim -e`` / ``-E`` / ``-es``)."""
    if name in ("ex",):
        return True
    for a in args:
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--") and any(c in a[1:] for c in "eE") and len(a) <= 4:
            return True
    return False


def ex_input(args: list[str], text: str | None, name: str = "vim") -> Script | None:
    if not ex_mode(name, args) or (text is None and vim_commands(ex_args(name, args))[0]):
        return None  # not in ex mode, or the script is in the arguments
    if text is None:
        return Script(hidden="ex runs the commands its input holds, which the analysis cannot see")
    return ex_script(text)


#: Programs that read a script from their input: name -> what the visible (or unseen) input does.
INPUT_SCRIPTS: dict[str, Callable[[str, list[str], str | None], Script | None]] = {
    "sqlite3": lambda _n, a, t: sqlite_input(a, t), "sqlite": lambda _n, a, t: sqlite_input(a, t),
    "ed": lambda _n, a, t: ed_input(a, t), "red": lambda _n, a, t: ed_input(a, t),
    **{n: (lambda n, a, t: ex_input(a, t, n)) for n in ("ex", "vim", "vi", "nvim", "view", "gvim", "rvim")},
}


def ex_args(name: str, args: list[str]) -> list[str]:
    """vim's arguments with ex mode's ``-s`` (silent, no value) made a plain flag, so it is
    not read as ``-s SCRIPTIN`` (the normal-mode key script it is outside ex mode)."""
    if "-s" not in args or not ex_mode(name, args):
        return args
    return ["-n" if a == "-s" else a for a in args]


def _with_ex_commands(name: str, base: Callable[[list[str]], Effects]) -> Callable[[list[str]], Effects]:
    """vim's family, plus what its ``-c`` / ``+cmd`` / ``--cmd`` ex commands read and write."""

    def fn(args: list[str]) -> Effects:
        args = ex_args(name, args)
        e = base(args)
        cmds = vim_commands(args)[0]
        if cmds:
            e = Effects(reads=list(e.reads), writes=e.writes, side_effect=e.side_effect, runs_program=e.runs_program)
            for cmd in cmds:
                ex_script(cmd).effects_into(e)
        return e

    return fn


for _name in ("vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "rvim", "rview", "evim", "gview"):
    FAMILIES[_name] = _with_ex_commands(_name, FAMILIES[_name])
