"""Command-line option grammars: which words are options, which take values, which are operands.

Checks on a command's options must see them the way the program does. GNU programs parse
with ``getopt_long``, which accepts any unambiguous prefix of a long option (``sort --o=F``
is ``--output=F``, ``sed --i`` is ``--in-place``), clusters short options (``-rf``), takes
a value glued on (``-oFILE``, ``--output=FILE``) or from the next word, and finds options
after operands too. Comparing option names as strings misses all of that, so each command
family declares a ``Grammar`` and ``parse_args`` applies these rules.

A grammar need not list every option a program has, but it must list every option a check
cares about: an abbreviation then resolves to that option even when the real program might
find it ambiguous (which only makes the program fail), never the other way round.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

NONE, REQUIRED, OPTIONAL = "", "=", "?"


@dataclass(frozen=True)
class Grammar:
    """The option syntax of one program.

    ``short`` maps letters that take a value to ``REQUIRED`` / ``OPTIONAL``; with
    ``strict_short`` every other letter is unknown, otherwise it is a flag. ``long`` maps
    long names (without dashes) to their value kind; ``aliases`` gives short letters the
    long name checks use (``"o": "output"``).
    """

    short: Mapping[str, str] = field(default_factory=dict)
    long: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    abbreviations: bool = True  # getopt_long: unambiguous prefixes of long names
    permute: bool = True  # options may follow operands; False: the first operand ends them
    strict_short: bool = False
    single_dash_long: bool = False  # -name long options (find, xxd, java): every -word is one option


def grammar(short: str = "", long: str = "", aliases: str = "", **kw: bool) -> Grammar:
    """A grammar from compact strings: ``short="o= t? "`` / ``long="output= sort? all"``.

    ``aliases`` is ``"o:output t:tabs"``.
    """

    def table(spec: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for item in spec.split():
            if item.endswith(("=", "?")):
                out[item[:-1]] = item[-1]
            else:
                out[item] = NONE
        return out

    alias_map = dict(pair.split(":", 1) for pair in aliases.split())
    return Grammar(short=table(short), long=table(long), aliases=alias_map, **kw)


@dataclass(slots=True)
class Option:
    name: str  # the canonical name: a long name, or "-x" for a short letter without alias
    value: str | None
    index: int  # the argument holding the value (or the option itself when it has none)
    given: str  # as written


@dataclass(slots=True)
class ParsedArgs:
    options: list[Option] = field(default_factory=list)
    operands: list[int] = field(default_factory=list)  # indexes into the arguments
    unknown: list[str] = field(default_factory=list)  # unknown or ambiguous options, as written
    args: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(o.name in names for o in self.options)

    def values(self, *names: str) -> list[Option]:
        return [o for o in self.options if o.name in names and o.value is not None]

    def operand_values(self) -> list[str]:
        return [self.args[i] for i in self.operands]


def resolve_long(g: Grammar, given: str) -> str | None:
    """The long option ``given`` (without dashes) stands for, or None when unknown/ambiguous."""
    if given in g.long:
        return given
    if not g.abbreviations or not given:
        return None
    hits = [name for name in g.long if name.startswith(given)]
    if len(hits) == 1:
        return hits[0]
    return None


def parse_args(g: Grammar, args: Iterable[str]) -> ParsedArgs:
    """Split ``args`` (the words after the command name) by grammar ``g``."""
    argv = list(args)
    n = len(argv)
    if not any(a[:1] == "-" for a in argv):  # the common case: operands only
        return ParsedArgs(operands=list(range(n)), args=argv)
    out = ParsedArgs(args=argv)
    i = 0
    while i < n:
        a = argv[i]
        if a == "--":
            out.operands.extend(range(i + 1, n))
            break
        if not a.startswith("-") or a == "-":
            out.operands.append(i)
            if not g.permute:
                out.operands.extend(range(i + 1, n))
                break
            i += 1
            continue
        if a.startswith("--") or g.single_dash_long:
            body = a[2:] if a.startswith("--") else a[1:]
            given, eq, value = body.partition("=")
            name = resolve_long(g, given)
            if name is None:
                out.unknown.append(a)
                out.options.append(Option(given, value if eq else None, i, a))
                i += 1
                continue
            kind = g.long[name]
            if eq:
                out.options.append(Option(name, value, i, a))
            elif kind == REQUIRED and i + 1 < n:
                out.options.append(Option(name, argv[i + 1], i + 1, a))
                i += 1
            elif kind == REQUIRED:
                out.unknown.append(a)  # missing value: the program refuses to run
            else:
                out.options.append(Option(name, None, i, a))
            i += 1
            continue
        j = 1
        while j < len(a):
            letter = a[j]
            short_kind = g.short.get(letter)
            name = g.aliases.get(letter, "-" + letter)
            if short_kind is None:
                if g.strict_short:
                    out.unknown.append("-" + letter)
                out.options.append(Option(name, None, i, a))
                j += 1
                continue
            rest = a[j + 1:]
            if rest:
                out.options.append(Option(name, rest, i, a))
            elif short_kind == REQUIRED and i + 1 < n:
                out.options.append(Option(name, argv[i + 1], i + 1, a))
                i += 1
            elif short_kind == REQUIRED:
                out.unknown.append(a)
            else:
                out.options.append(Option(name, None, i, a))
            break
        i += 1
    return out


def is_prefix_of_any(given: str, names: Iterable[str]) -> bool:
    """Whether ``--given`` could abbreviate one of ``names`` (for programs without a full table)."""
    body = given.lstrip("-").split("=", 1)[0]
    return bool(body) and any(name.startswith(body) for name in names)
