"""What a command does to files and to the system, per command family, from its options.

One small function per family reads the command's arguments with that program's option
grammar (``options``: abbreviations, clusters, glued values) and reports an ``Effects``:
the files it reads and writes, the trees it walks, whether it follows symlinks while
walking, whether it takes file names from somewhere the analysis cannot see, what it runs,
and why it is not read-only. The Bash analysis applies Read/Edit rules to those paths and
uses the rest to decide whether the command can run without a prompt.

Every function answers on the safe side when unsure: an unknown option that could
abbreviate a dangerous one counts as that option.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pegboard_permissions_shell.options import (
    Grammar,
    ParsedArgs,
    grammar,
    is_prefix_of_any,
    parse_args,
)

#: (index of the argument that holds it, the path); index -1: implied (``.``).
Ref = tuple[int, str]


@dataclass(slots=True)
class Effects:
    """A command's effects; shared between calls (cached), so never changed after it is made."""

    reads: list[Ref] = field(default_factory=list)  # file contents (or metadata) read
    writes: Sequence[Ref] = ()
    trees: Sequence[Ref] = ()  # directories whose files are all read
    follows_links: bool = False  # the walk follows symlinks (grep -R, rg -L, diff -r ...)
    names_from: str | None = None  # file names come from a file or stdin the analysis cannot see
    side_effect: str | None = None  # why the command is not read-only
    runs_program: str | None = None  # an option makes it run another program
    into: Sequence[Ref] = ()  # directories it writes files into under names the analysis cannot see
    opaque: str | None = None  # an option the table does not know: operands cannot be told apart
    #: (target, the paths written when the target is a directory): ``cp a b DIR`` writes ``DIR/a``, ``DIR/b``
    into_target: tuple[Ref, Sequence[Ref]] | None = None


Family = Callable[[list[str]], Effects]
FAMILIES: dict[str, Family] = {}


def family(*names: str) -> Callable[[Family], Family]:
    def register(fn: Family) -> Family:
        for n in names:
            FAMILIES[n] = fn
        return fn

    return register


def _ops(p: ParsedArgs) -> list[Ref]:
    return [(i, p.args[i]) for i in p.operands]


def _vals(p: ParsedArgs, *names: str) -> list[Ref]:
    return [(o.index, o.value) for o in p.values(*names) if o.value is not None]


def _touches(p: ParsedArgs, names: Iterable[str]) -> str | None:
    """The first option given that is, or could abbreviate, one of ``names``."""
    wanted = set(names)
    for o in p.options:
        if o.name in wanted:
            return o.given
    for given in p.unknown:
        if given.startswith("--") and is_prefix_of_any(given, wanted):
            return given
    return None


def _readers(g: Grammar, *, names_from: Iterable[str] = (), extra_reads: Iterable[str] = (),
             side: Iterable[str] = ()) -> Family:
    """A plain reader: operands are files read; ``names_from`` options name file lists."""
    lists = tuple(names_from)
    more = tuple(extra_reads)
    bad = tuple(side)

    def fn(args: list[str]) -> Effects:
        p = parse_args(g, args)
        e = Effects(reads=_ops(p) + _vals(p, *more) if more else _ops(p))
        if not p.options:
            return e
        hit = _touches(p, lists) if lists else None
        if hit:
            e.names_from = f"{hit} names the files to read"
            e.reads += _vals(p, *lists)
        hit = _touches(p, bad) if bad else None
        if hit:
            e.side_effect = f"{hit} is not read-only"
        return e

    return fn


# -- coreutils-style readers ----------------------------------------------------------------

for _names, _short in (
    (("cat", "rev"), ""), (("tac",), "s="), (("nl",), "b= d= f= h= i= l= n= s= v= w="), (("fold",), "w="),
    (("expand", "unexpand"), "t="), (("paste",), "d="), (("strings",), "n= t= e= T= s="),
    (("od",), "A= j= N= S= t= w?"), (("column",), "c= s= o= n= N= H= O= R= E= W= l= d?"), (("comm",), ""),
    (("cmp",), "i= n="), (("base64", "base32", "basenc"), "w="), (("more",), "n= p="),
):
    family(*_names)(_readers(grammar(short=_short)))
family("head", "tail")(_readers(grammar(
    short="n= c= s=", long="lines= bytes= pid= sleep-interval= max-unchanged-stats= follow? retry quiet silent "
    "verbose zero-terminated", aliases="n:lines c:bytes")))
family("wc")(_readers(grammar(long="files0-from= bytes chars lines max-line-length words total= zero"),
                      names_from=("files0-from",)))
family("cut")(_readers(grammar(short="b= c= d= f=", long="bytes= characters= delimiter= fields= complement "
                                                       "only-delimited output-delimiter= zero-terminated")))
family("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum")(
    _readers(grammar(short="a= l=", long="check binary tag text zero ignore-missing quiet status strict warn "
                     "algorithm= length= base64 raw untagged debug", aliases="c:check"),
             names_from=("check",)))
family("hexdump", "hd")(_readers(grammar(short="e= f= n= s=", long="", aliases="f:format-file"),
                                 extra_reads=("format-file",)))
family("stat")(_readers(grammar(short="c=", long="format= printf= dereference file-system terse cached=")))
family("file")(_readers(
    grammar(short="m= f= F= e= P=", long="magic-file= files-from= separator= exclude= exclude-quiet= "
            "parameter= compile brief checking-printout dereference no-dereference mime mime-type "
            "mime-encoding keep-going list raw special-files uncompress uncompress-noreport print0 "
            "no-buffer no-pad preserve-date extension apple",
            aliases="m:magic-file f:files-from C:compile"),
    names_from=("files-from",), extra_reads=("magic-file",), side=("compile",)))


@family("uniq")
def _uniq(args: list[str]) -> Effects:
    p = parse_args(grammar(short="f= s= w= D?", long="skip-fields= skip-chars= check-chars= all-repeated? "
                                                   "group? count repeated unique ignore-case zero-terminated"),
                   args)
    ops = _ops(p)
    return Effects(reads=ops[:1], writes=ops[1:2], side_effect="uniq writes its second operand" if ops[1:] else None)


_SORT = grammar(
    short="k= t= o= S= T=",
    long="ignore-leading-blanks check? dictionary-order debug field-separator= files0-from= "
    "general-numeric-sort human-numeric-sort ignore-case ignore-nonprinting key= merge month-sort numeric-sort "
    "output= parallel= random-sort random-source= reverse sort= stable buffer-size= temporary-directory= unique "
    "version-sort zero-terminated compress-program= batch-size= help version",
    aliases="o:output T:temporary-directory",
)


@family("sort")
def _sort(args: list[str]) -> Effects:
    p = parse_args(_SORT, args)
    e = Effects(reads=_ops(p) + _vals(p, "random-source"), writes=_vals(p, "output"))
    if e.writes:
        e.side_effect = "sort -o writes a file"
    if _touches(p, ("temporary-directory",)):
        e.side_effect = "sort -T writes temporary files elsewhere"
    hit = _touches(p, ("compress-program",))
    if hit:
        e.runs_program = f"sort {hit} runs a program"
    if _touches(p, ("files0-from",)):
        e.names_from = "sort --files0-from names the files to read"
        e.reads += _vals(p, "files0-from")
    return e


_DATE = grammar(short="d= f= r= s= I?", long="date= debug file= iso-8601? resolution rfc-email rfc-3339= "
                "reference= set= utc universal uct help version",
                aliases="d:date f:file r:reference s:set u:utc")


@family("date")
def _date(args: list[str]) -> Effects:
    p = parse_args(_DATE, args)
    e = Effects(reads=_vals(p, "file", "reference"))
    hit = _touches(p, ("set",))
    if hit:
        e.side_effect = f"date {hit} sets the clock"
    for _i, v in _ops(p):
        if not v.startswith("+"):
            e.side_effect = f"date {v} sets the clock"
    return e


# -- search ---------------------------------------------------------------------------------

_GREP = grammar(
    short="e= f= m= d= D= A= B= C=",
    long="extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case "
    "word-regexp line-regexp null-data no-messages invert-match version help max-count= byte-offset line-number "
    "no-line-number line-buffered with-filename no-filename label= only-matching quiet silent binary-files= text "
    "directories= devices= recursive dereference-recursive include= exclude= exclude-from= exclude-dir= "
    "files-without-match files-with-matches count initial-tab null before-context= after-context= context= "
    "color? colour? binary no-group-separator group-separator=",
    aliases="e:regexp f:file d:directories r:recursive R:dereference-recursive",
)


def _recurse_value(value: str | None) -> bool:
    """grep takes any unambiguous prefix of an argument value too (``-d rec``)."""
    return bool(value) and len(value or "") >= 3 and "recurse".startswith(value or "")


@family("grep", "egrep", "fgrep")
def _grep(args: list[str]) -> Effects:
    p = parse_args(_GREP, args)
    ops = _ops(p)
    if not p.values("regexp", "file") and ops:
        ops = ops[1:]
    e = Effects(reads=ops + _vals(p, "file", "exclude-from"))
    follow = p.has("dereference-recursive")
    recursive = follow or p.has("recursive") or any(_recurse_value(o.value) for o in p.values("directories"))
    if recursive:
        e.trees = ops or [(-1, ".")]
        e.follows_links = follow
    return e


_RG_VALUED = ("regexp file glob iglob type type-not max-count after-context before-context context max-columns "
              "threads encoding type-add type-clear ignore-file max-depth sort sortr color colors path-separator "
              "replace max-filesize context-separator field-match-separator field-context-separator dfa-size-limit "
              "regex-size-limit engine pre pre-glob hostname-bin hyperlink-format generate")
_RG = grammar(short="e= f= g= t= T= m= A= B= C= M= j= E= r= d=",
              long=" ".join(f"{n}=" for n in _RG_VALUED.split()) + " follow search-zip files",
              aliases="e:regexp f:file L:follow z:search-zip r:replace", abbreviations=False)


@family("rg")
def _rg(args: list[str]) -> Effects:
    p = parse_args(_RG, args)
    ops = _ops(p)
    if not p.values("regexp", "file") and not p.has("files") and ops:
        ops = ops[1:]
    e = Effects(reads=_vals(p, "file", "ignore-file"), trees=ops or [(-1, ".")], follows_links=p.has("follow"))
    hit = _touches(p, ("pre", "pre-glob", "hostname-bin", "search-zip"))
    if hit:
        e.runs_program = f"rg {hit} runs a program"
    return e


_DIFF = grammar(
    short="C= U= D= F= I= L= S= W= x= X=",
    long="normal brief report-identical-files context? unified? ed rcs side-by-side left-column "
    "suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize= "
    "suppress-blank-empty paginate new-file unidirectional-new-file ignore-case ignore-file-name-case "
    "no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= recursive "
    "no-dereference ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space "
    "ignore-blank-lines ignore-matching-lines= text strip-trailing-cr minimal speed-large-files "
    "horizon-lines= width= line-format= old-line-format= new-line-format= unchanged-line-format= "
    "old-group-format= new-group-format= changed-group-format= unchanged-group-format= ifdef= color? "
    "palette= help version",
    aliases="r:recursive X:exclude-from l:paginate",
)


@family("diff")
def _diff(args: list[str]) -> Effects:
    p = parse_args(_DIFF, args)
    ops = _ops(p) + _vals(p, "from-file", "to-file")
    e = Effects(reads=ops + _vals(p, "exclude-from"))
    if p.has("recursive"):
        e.trees = ops
        e.follows_links = not p.has("no-dereference")
    if _touches(p, ("paginate",)):
        e.runs_program = "diff --paginate runs pr"
    return e


# -- listers (names and metadata only) ------------------------------------------------------

family("ls", "dir", "vdir")(_readers(grammar(
    short="I= w= T=", long="ignore= width= hide= format= sort= time-style= time= color? indicator-style= "
    "block-size= tabsize= quoting-style= hyperlink?")))
family("du")(_readers(
    grammar(short="d= B= t= X=", long="files0-from= exclude-from= exclude= max-depth= block-size= threshold= "
            "time? time-style=", aliases="X:exclude-from"),
    names_from=("files0-from",), extra_reads=("exclude-from",)))


_TREE_DANGER = ("o", "R", "fromfile")


@family("tree")
def _tree(args: list[str]) -> Effects:
    p = parse_args(grammar(short="L= P= I= o= H= T=", long="filelimit= charset= timefmt= sort= fromfile "
                           "help version", abbreviations=False), args)
    e = Effects(reads=_ops(p))
    if p.has("-o") or p.has("-R"):
        e.side_effect = "tree -o / -R writes files"
        e.writes = _vals(p, "-o")
    if _touches(p, ("fromfile",)):
        e.side_effect = e.side_effect or "tree --fromfile reads a listing"
    return e


_FIND_RUN = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITE = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})


@family("find")
def _find(args: list[str]) -> Effects:
    e = Effects()
    i = 0
    while (i < len(args) and args[i] in ("-H", "-L", "-P", "-D", "-O")) or (
            i < len(args) and args[i].startswith(("-D", "-O")) and len(args[i]) > 2):
        if args[i] == "-L":
            e.follows_links = True
        i += 2 if args[i] in ("-D",) else 1
    start = i
    while i < len(args) and not args[i].startswith(("-", "(", "!", ")")):
        e.reads.append((i, args[i]))
        i += 1
    if i == start:
        e.reads.append((-1, "."))
    for j in range(i, len(args)):
        a = args[j]
        if a in _FIND_RUN:
            e.runs_program = f"find {a} runs a program"
        elif a in _FIND_WRITE:
            e.side_effect = f"find {a} writes or deletes files"
            if a == "-delete":  # deletes under every start point: Edit rules and critical paths apply
                e.writes = [*e.writes, *e.reads]
            elif j + 1 < len(args):
                e.writes = [*e.writes, (j + 1, args[j + 1])]
        elif a == "-follow":
            e.follows_links = True
        elif a == "-files0-from":
            e.names_from = "find -files0-from names the paths to search"
    return e


@family("fd", "fdfind")
def _fd(args: list[str]) -> Effects:
    p = parse_args(grammar(short="x= X= e= E= t= d= S= j= c= o=", long="exec= exec-batch= extension= exclude= "
                           "type= max-depth= min-depth= exact-depth= size= threads= color= owner= base-directory= "
                           "search-path= ignore-file= changed-within= changed-before= format= batch-size= "
                           "path-separator= max-results= follow",
                           aliases="x:exec X:exec-batch L:follow", abbreviations=False), args)
    ops = _ops(p)
    e = Effects(reads=ops[1:] or [(-1, ".")], follows_links=p.has("follow"))
    e.reads += _vals(p, "ignore-file", "search-path", "base-directory")
    if p.has("exec", "exec-batch"):
        e.runs_program = "fd --exec runs a program"
    return e


# -- text tools with scripts ----------------------------------------------------------------

_SED = grammar(short="e= f= l= i? E", long="expression= file= in-place? line-length= null-data zero-terminated "
               "quiet silent regexp-extended separate sandbox debug posix unbuffered follow-symlinks binary help "
               "version", aliases="e:expression f:file i:in-place n:quiet")


@dataclass
class SedCommand:
    scripts: list[str]
    files: list[Ref]
    in_place: bool
    script_files: list[Ref]


def sed_command(args: list[str]) -> SedCommand:
    p = parse_args(_SED, args)
    scripts = [v for _i, v in _vals(p, "expression")]
    script_files = _vals(p, "file")
    ops = _ops(p)
    if not scripts and not script_files and ops:
        scripts.append(ops[0][1])
        ops = ops[1:]
    in_place = p.has("in-place") or bool(_touches(p, ("in-place",)))
    return SedCommand(scripts, ops, in_place, script_files)


_SED_CMD = re.compile(r"""
    \s*
    (?:(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/|\+\d+|~\d+))?\s*!?\s*)?
    (?:[pdqQ=nNgGhHxlDP]|s(?P<d>[^\w\s\\])(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)[gpiImM0-9]*|y(?P<e>[^\w\s\\])(?:(?!(?P=e))[^\\\n]|\\.)*(?P=e)(?:(?!(?P=e))[^\\\n]|\\.)*(?P=e))?
    \s*""", re.VERBOSE)


def sed_script_is_safe(script: str) -> bool:
    """Whether a sed script only prints/substitutes (no ``w``, ``e``, ``r`` or ``W`` commands)."""
    pos = 0
    while pos < len(script):
        m = _SED_CMD.match(script, pos)
        if not m or m.end() == pos:
            return False
        pos = m.end()
        if pos < len(script):
            if script[pos] in ";\n":
                pos += 1
            else:
                return False
    return True


_SED_ADDRESS = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/|\\(.)(?:(?!\1).)*\1)?(?:\s*,\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/|[+~]\d+))?"
#: ``w FILE`` / ``W FILE`` / ``r FILE`` / ``R FILE`` commands and the ``w FILE`` flag of ``s``:
#: the file name runs to the end of the line.
_SED_FILE_CMD = re.compile(r"(?:^|[;{}])\s*" + _SED_ADDRESS + r"\s*!?\s*([wWrR])\s*(\S[^\n]*)", re.M)
_SED_S_WRITE = re.compile(r"\bs([^\w\s\\])(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImMe0-9]*w\s*(\S[^\n]*)")


def sed_files(script: str) -> tuple[list[str], list[str]]:
    """(files read, files written) by a sed script's ``r`` / ``R`` / ``w`` / ``W`` commands and ``s///w``."""
    reads: list[str] = []
    writes: list[str] = []
    for m in _SED_FILE_CMD.finditer(script):
        (writes if m.group(2) in "wW" else reads).append(m.group(3).strip())
    writes += [m.group(2).strip() for m in _SED_S_WRITE.finditer(script)]
    return ([r for r in reads if r not in ("/dev/stdin",)],
            [w for w in writes if w not in ("/dev/stdout", "/dev/stderr")])


@family("sed")
def _sed(args: list[str]) -> Effects:
    s = sed_command(args)
    e = Effects(reads=s.files + s.script_files)
    for script in s.scripts:
        if not sed_script_is_safe(script):
            reads, writes = sed_files(script)
            e.reads += [(-1, r) for r in reads]
            if writes:
                e.writes = [*e.writes, *((-1, w) for w in writes)]
                e.side_effect = "sed writes files its script names"
    if s.in_place:
        e.writes = [*s.files, *e.writes]
        e.side_effect = "sed -i edits files"
    if s.script_files or not s.scripts or not all(sed_script_is_safe(x) for x in s.scripts):
        e.runs_program = "sed script with w/e/r commands (or unreadable)"
    return e


@family("jq")
def _jq(args: list[str]) -> Effects:
    e = Effects()
    program_given = False
    operands: list[Ref] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--rawfile", "--slurpfile") and i + 2 < len(args):
            e.reads.append((i + 2, args[i + 2]))
            i += 3
            continue
        if a in ("--arg", "--argjson") and i + 2 < len(args):
            i += 3
            continue
        if a in ("-f", "--from-file") and i + 1 < len(args):
            e.reads.append((i + 1, args[i + 1]))
            program_given = True
            i += 2
            continue
        if a in ("-L", "--library-path") or a.startswith("-L"):
            e.side_effect = "jq -L loads modules from a directory"
            i += 1 if len(a) > 2 and a.startswith("-L") and not a.startswith("--") else 2
            continue
        if a in ("--indent",) and i + 1 < len(args):
            i += 2
            continue
        if a in ("--args", "--jsonargs"):
            break  # the rest are values, not files
        if a.startswith("-") and a != "-":
            i += 1
            continue
        operands.append((i, a))
        i += 1
    e.reads += operands if program_given else operands[1:]
    return e


@family("xxd")
def _xxd(args: list[str]) -> Effects:
    e = Effects()
    ops: list[Ref] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1:
            letter = a[1]
            if letter == "r":
                e.side_effect = "xxd -r converts back to binary"
            if letter in "cglnosR" and len(a) == 2:
                i += 1  # the value is the next word (xxd reads only the option letter)
        else:
            ops.append((i, a))
        i += 1
    e.reads = ops[:1]
    if len(ops) > 1:
        e.writes = ops[1:2]
        e.side_effect = "xxd writes its second operand"
    return e


# -- system information ---------------------------------------------------------------------

@family("ps")
def _ps(args: list[str]) -> Effects:
    for a in args:
        if not a.startswith("-") and "e" in a and re.fullmatch(r"[A-Za-z]+", a):
            return Effects(side_effect=f"ps {a} shows other processes' environments")
        if a.startswith("--") and is_prefix_of_any(a, ("environment",)):
            return Effects(side_effect=f"ps {a} shows other processes' environments")
    return Effects()


_SS = grammar(short="f= A= N= D= F=", long="numeric resolve all listening options info memory processes threads "
              "cgroup timers extended tos kill diag= filter= net= family= query= socket= context contexts bpf events "
              "summary ipv4 ipv6 packet tcp udp dccp raw unix sctp vsock xdp mptcp tipc help version oneline no-header "
              "inet-sockopt tipcinfo", aliases="K:kill D:diag F:filter")


@family("ss")
def _ss(args: list[str]) -> Effects:
    p = parse_args(_SS, args)
    e = Effects(reads=_vals(p, "filter"))
    hit = _touches(p, ("kill",))
    if hit:
        e.side_effect = f"ss {hit} closes sockets"
    hit = _touches(p, ("diag",))
    if hit:
        e.side_effect = f"ss {hit} writes raw socket data"
        e.writes = _vals(p, "diag")
    return e


_MAN_SAFE = frozenset({"all", "whatis", "apropos", "where", "path", "location", "where-cat", "location-cat",
                       "sections", "help", "version", "usage", "regex", "wildcard", "names-only", "exact",
                       "ignore-case", "match-case", "local-file", "-s", "-S"})
_MAN = grammar(short="s= S= L= m= M= P= p= C= E= H? T? R= e=",
               long="all whatis apropos where path location where-cat location-cat sections= help version usage "
               "regex wildcard names-only exact ignore-case match-case local-file pager= html? troff-device? "
               "gxditview? ditroff prompt= preprocessor= config-file= manpath= systems= extension= encoding= "
               "recode= locale= debug default catman global-apropos troff no-hyphenation no-justification "
               "no-subpages",
               aliases="a:all f:whatis k:apropos w:where W:where-cat l:local-file s:sections S:sections "
               "P:pager H:html T:troff-device K:global-apropos t:troff Z:ditroff C:config-file M:manpath "
               "X:gxditview p:preprocessor")


@family("man")
def _man(args: list[str]) -> Effects:
    p = parse_args(_MAN, args)
    e = Effects()
    for o in p.options:
        if o.name not in _MAN_SAFE:
            e.side_effect = f"man {o.given} is not in the read-only set"
            break
    if p.unknown:
        e.side_effect = f"man {p.unknown[0]} is not in the read-only set"
    if p.has("local-file"):
        e.reads = _ops(p)
    return e


#: Commands whose only read-only use is printing their version.
VERSION_FLAGS: dict[str, frozenset[str]] = {
    name: frozenset({"--version", "-V"} | extra)
    for name, extra in {
        "python": frozenset({"-VV"}), "python3": frozenset({"-VV"}), "node": frozenset({"-v"}),
        "npm": frozenset({"-v"}), "deno": frozenset(), "bun": frozenset({"-v"}), "go": frozenset(),
        "rustc": frozenset(), "cargo": frozenset(), "java": frozenset({"-version"}), "gcc": frozenset(),
        "clang": frozenset(), "make": frozenset({"-v"}), "cmake": frozenset(), "pip": frozenset(),
        "pip3": frozenset(), "uv": frozenset(), "docker": frozenset({"-v"}), "tsc": frozenset({"-v"}),
    }.items()
}


def version_only(name: str, args: list[str]) -> bool:
    flags = VERSION_FLAGS.get(name)
    if flags is None:
        return False
    if name == "go" and args == ["version"]:
        return True
    return len(args) == 1 and args[0] in flags


def effects(name: str, args: Sequence[str]) -> Effects | None:
    """The effects of ``name args`` when its family is known, else None."""
    if name not in FAMILIES:
        return None
    return _cached_effects(name, args if isinstance(args, tuple) else tuple(args))


@lru_cache(maxsize=4096)
def _cached_effects(name: str, args: tuple[str, ...]) -> Effects:
    return FAMILIES[name](list(args))


# -- git ------------------------------------------------------------------------------------

#: Global options that change nothing about what git runs or where it reads its config.
_GIT_HARMLESS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
                           "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-advice",
                           "--no-lazy-fetch"})
#: Global options that make a read-only subcommand run other programs or use other config.
_GIT_DANGER = ("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "--super-prefix", "--namespace")
_GIT_VALUED = frozenset({"-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                         "--list-cmds", "--attr-source"})


@dataclass
class GitCall:
    """git's global options, split from the subcommand the way git itself reads them."""

    sub: int  # index of the subcommand in the arguments (len(args): none)
    directories: list[Ref] = field(default_factory=list)  # -C values, in order
    danger: str | None = None  # a global option that changes what git runs or reads
    plain: bool = True  # only harmless options (and -C): rules may match the command without them


def git_call(args: list[str]) -> GitCall:
    """git parses its own global options exactly (no abbreviations), with ``=`` or a separate value."""
    call = GitCall(sub=len(args))
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            call.sub = i
            return call
        name, eq, _value = a.partition("=")
        if a.startswith("-c") and a != "-c" and not a.startswith("--"):
            name, eq = "-c", "="  # -ckey=value
        if a.startswith("-C") and a != "-C" and not a.startswith("--"):
            call.directories.append((i, a[2:]))
            i += 1
            continue
        if name == "--exec-path" and not eq:
            call.plain = False  # prints the path; harmless
        elif name in _GIT_DANGER:
            call.danger = call.danger or f"git {name} changes what git runs"
            call.plain = False
        elif name == "-C":
            if i + 1 < len(args):
                call.directories.append((i + 1, args[i + 1]))
        elif name not in _GIT_HARMLESS:
            call.plain = False
        if name in _GIT_VALUED and not eq:
            i += 1
        i += 1
    return call


_GIT_READ_ONLY = frozenset({
    "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
    "shortlog", "grep", "rev-list", "merge-base", "name-rev", "whatchanged", "annotate", "count-objects",
    "cherry", "show-ref", "for-each-ref", "help", "version", "var", "check-ignore", "diff-tree",
    "diff-files", "diff-index", "range-diff", "show-branch",
})
#: Subcommand options (parse-options: any unambiguous prefix) that write files or run programs.
_GIT_BAD_LONG = ("output", "open-files-in-pager", "ext-diff", "exec", "upload-pack", "receive-pack")
_GIT_OUTPUT_INDICATORS = ("--output-indicator-new", "--output-indicator-old", "--output-indicator-context")


def git_output_files(rest: list[str]) -> list[int]:
    """Indexes in ``rest`` of the files a ``--output=FILE`` option (any unambiguous prefix, as
    git's option parser takes) makes a git subcommand write: ``git diff --output=x`` writes x."""
    found: list[int] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--":
            break
        body, eq, _value = a[2:].partition("=") if a.startswith("--") else ("", "", "")
        if len(body) >= 3 and "output".startswith(body) and a.split("=", 1)[0] not in _GIT_OUTPUT_INDICATORS:
            if eq:
                found.append(i)
            elif i + 1 < len(rest):
                found.append(i + 1)
                i += 1
        i += 1
    return found


#: git subcommands that write files their own short options or operands name.
GIT_FILE_WRITERS = frozenset({"archive", "format-patch", "bundle", "apply"})


def git_sub_writes(sub: str, rest: list[str]) -> tuple[list[Ref], list[Ref]]:
    """(files written, directories written into) by ``git archive -o FILE``,
    ``git format-patch -o DIR``, ``git bundle create FILE``, ``git apply --directory=DIR``
    (``--output=`` is found apart)."""
    files: list[Ref] = []
    dirs: list[Ref] = []
    if sub == "apply":
        if any(a in ("--check", "--stat", "--numstat", "--summary") for a in rest) and "--apply" not in rest:
            return files, dirs  # reports only
        for i, a in enumerate(rest):
            if a.startswith("--directory="):
                dirs.append((i, a.split("=", 1)[1]))
            elif a == "--directory" and i + 1 < len(rest):
                dirs.append((i + 1, rest[i + 1]))
        return files, dirs
    for i, a in enumerate(rest):
        if a == "--":
            break
        value: Ref | None = None
        if a == "-o" and i + 1 < len(rest):
            value = (i + 1, rest[i + 1])
        elif a.startswith("-o") and not a.startswith("--") and len(a) > 2:
            value = (i, a[2:])
        elif sub == "format-patch" and a.startswith("--output-d"):
            body, eq, v = a.partition("=")
            if "--output-directory".startswith(body):
                value = (i, v) if eq else ((i + 1, rest[i + 1]) if i + 1 < len(rest) else None)
        if value is not None:
            (dirs if sub == "format-patch" else files).append(value)
    if sub == "format-patch":
        if not dirs and "--stdout" not in rest:
            dirs.append((-1, "."))
        files += [(-1, posixpath.join(d, "*.patch")) for _i, d in dirs]  # NNNN-subject.patch
        dirs = []
    if sub == "bundle" and rest[:1] == ["create"] and len(rest) > 1:
        ops = [(i, a) for i, a in enumerate(rest[1:], 1) if not a.startswith("-")]
        files += ops[:1]
    return files, dirs


def git_option_danger(rest: list[str]) -> str | None:
    for a in rest:
        if a == "--":
            break
        if a.startswith("--") and not a.startswith("--no-"):
            if a.split("=", 1)[0] in _GIT_OUTPUT_INDICATORS:
                continue
            body = a[2:].split("=", 1)[0]
            if len(body) >= 2 and is_prefix_of_any(body, _GIT_BAD_LONG):
                return f"git {a} writes a file or runs a program"
        elif a.startswith("-O") and not a.startswith("--"):
            return f"git {a} runs a pager program"
    return None


#: ``git SUB`` options whose value is a command git runs: (subcommand, short, long names).
_GIT_COMMAND_OPTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("rebase", "-x", ("exec",)),
    ("clone", "-u", ("upload-pack",)),
    ("difftool", "-x", ("extcmd",)),
    ("grep", "-O", ("open-files-in-pager",)),
)
_GIT_FILTERS = ("env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter",
                "tag-name-filter")
#: ``git SUB`` long options (any prefix) whose value is a command git runs.
_GIT_COMMAND_LONGS: dict[str, tuple[str, ...]] = {
    "filter-branch": _GIT_FILTERS, "rebase": ("exec",), "clone": ("upload-pack",), "fetch": ("upload-pack",),
    "pull": ("upload-pack",), "ls-remote": ("upload-pack",), "fetch-pack": ("upload-pack", "exec"),
    "archive": ("exec",), "push": ("receive-pack", "exec"), "send-pack": ("receive-pack", "exec"),
    "difftool": ("extcmd",), "grep": ("open-files-in-pager",),
}


def git_commands(sub: str, rest: list[str]) -> list[str]:
    """Shell commands ``git SUB REST`` runs from its arguments (``submodule foreach``,
    ``bisect run``, ``rebase -x``, ``clone -u``, ``--upload-pack=`` ...), for deny rules."""
    out: list[str] = []
    if sub == "submodule" and "foreach" in rest:
        tail = rest[rest.index("foreach") + 1:]
        while tail and tail[0].startswith("-"):
            tail = tail[1:]
        out.append(" ".join(tail))
    if sub == "bisect" and rest[:1] == ["run"]:
        out.append(" ".join(rest[1:]))
    longs = _GIT_COMMAND_LONGS.get(sub, ())
    for i, a in enumerate(rest):
        if a == "--":
            break
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        for s_sub, short, _names in _GIT_COMMAND_OPTIONS:
            if sub == s_sub and a.startswith(short) and not a.startswith("--"):
                value = a[len(short):] or nxt
                if value:
                    out.append(value)
        if longs and a.startswith("--") and len(a) > 4:
            body, eq, value = a[2:].partition("=")
            hits = [n for n in longs if n.startswith(body)]
            if hits and (eq or nxt):
                out.append(value if eq else nxt or "")
    return [c for c in out if c.strip()]


def git_side_effect(sub: str, rest: list[str]) -> str | None:
    """Why ``git SUB REST`` is not read-only, or None."""
    opts = [a for a in rest if a.startswith("-")]
    if sub == "help":
        for a in opts:
            if a in ("-w", "-i") or (a.startswith("--") and len(a) > 2 and is_prefix_of_any(a, ("web", "info"))):
                return f"git help {a} starts a viewer program"
        return None
    if sub == "remote":
        if not rest or rest in (["-v"], ["--verbose"]):
            return None
        if rest[0] == "get-url":
            return None
        if rest[0] == "show" and "-n" in rest[1:]:
            return None
        if rest[0] == "show":
            return "git remote show contacts the remote"
        return f"git remote {rest[0]} is not read-only"
    if sub in _GIT_READ_ONLY:
        return None
    if sub == "branch":
        ok = {"-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes", "--show-current",
              "--contains", "--merged", "--no-merged", "--sort", "--format", "--no-color", "--color",
              "--points-at"}
        if all(a.split("=", 1)[0] in ok for a in opts) and (
            not [a for a in rest if not a.startswith("-")] or "--list" in rest or "-l" in rest
            or any(a.startswith(("--contains", "--merged", "--no-merged", "--points-at")) for a in rest)
        ):
            return None
        return "git branch changes branches"
    if sub == "tag":
        if not rest or rest[0] in ("-l", "--list") or all(a.startswith("-n") for a in rest):
            return None
        return "git tag changes tags"
    if sub == "stash" and rest and rest[0] in ("list", "show"):
        return None
    if sub == "worktree" and rest and rest[0] == "list":
        return None
    if sub == "config":
        reading = ("--get", "--get-all", "--list", "-l", "--get-regexp")
        if rest and all(a in (*reading, "--show-origin", "--global", "--local", "--system", "--name-only", "--null",
                              "-z", "--show-scope") or not a.startswith("-") for a in rest) \
                and any(a in reading for a in rest):
            return None
        return "git config changes settings"
    if sub == "reflog" and (not rest or rest[0] == "show" or rest[0].startswith("-")):
        return None
    return f"git {sub} is not read-only"


# -- commands that write files --------------------------------------------------------------

def _writers(g: Grammar, *, reads_opts: Iterable[str] = ()) -> Family:
    more = tuple(reads_opts)

    def fn(args: list[str]) -> Effects:
        p = parse_args(g, args)
        return Effects(writes=_ops(p), reads=_vals(p, *more), side_effect="writes files")

    return fn


family("rm", "rmdir", "unlink", "shred")(_writers(grammar(short="n= s=", long="interactive? one-file-system "
                                                          "no-preserve-root preserve-root? recursive dir verbose force "
                                                          "ignore-fail-on-non-empty parents iterations= size= "
                                                          "random-source= remove? exact zero")))
family("touch")(_writers(grammar(short="d= r= t=", long="date= reference= time= no-create no-dereference",
                                 aliases="r:reference"), reads_opts=("reference",)))
family("mkdir")(_writers(grammar(short="m= Z?", long="mode= parents verbose context?")))
family("tee")(_writers(grammar(long="append ignore-interrupts output-error? help version")))
family("truncate")(_writers(grammar(short="s= r=", long="size= reference= no-create io-blocks",
                                    aliases="r:reference"), reads_opts=("reference",)))

_COPY = grammar(short="S= t= b? Z? o= g= m=",
                long="target-directory= suffix= backup? reflink? sparse= preserve? no-preserve= attributes-only "
                "copy-contents debug dereference force interactive link no-clobber no-dereference one-file-system "
                "parents recursive remove-destination strip-trailing-slashes symbolic-link no-target-directory "
                "update? verbose archive context? exchange keep-directory-symlink owner= group= mode= compare "
                "directory preserve-context strip strip-program= logical physical relative",
                aliases="t:target-directory T:no-target-directory")


@family("cp", "mv", "ln", "install")
def _copy(args: list[str]) -> Effects:
    p = parse_args(_COPY, args)
    ops = _ops(p)
    target = _vals(p, "target-directory")
    e = Effects(side_effect="writes files")
    if target:
        e.writes, e.reads = target, ops
        e.into_target = (target[-1], into_dir(target[-1], ops))
    elif len(ops) >= 2:
        e.writes, e.reads = ops[-1:], ops[:-1]
        e.into_target = (ops[-1], into_dir(ops[-1], ops[:-1]))
    else:
        e.reads = ops
    e.reads += _vals(p, "strip-program")
    if any(o.name in ("-r", "-R", "recursive", "archive", "-a") for o in p.options):
        e.trees = list(e.reads)
        e.follows_links = any(o.name in ("-L", "dereference") for o in p.options)
    if p.has("strip-program"):
        e.runs_program = "install --strip-program runs a program"
    return e


def into_dir(target: Ref, sources: list[Ref]) -> list[Ref]:
    """``cp SRC DIR`` writes ``DIR/basename(SRC)`` for each source."""
    out: list[Ref] = []
    for _i, src in sources:
        base = posixpath.basename(src.rstrip("/"))
        if base and base not in (".", "..") and not src.endswith("/"):
            out.append((-1, posixpath.join(target[1], base)))
    return out




@family("chmod", "chown", "chgrp")
def _chmod(args: list[str]) -> Effects:
    p = parse_args(grammar(long="reference= recursive changes silent quiet verbose dereference no-dereference "
                           "from= preserve-root no-preserve-root", aliases="R:recursive"), args)
    ops = _ops(p)
    if not p.values("reference"):
        ops = ops[1:]
    return Effects(writes=ops, reads=_vals(p, "reference"), side_effect="changes file metadata")


@family("dd")
def _dd(args: list[str]) -> Effects:
    e = Effects(side_effect="dd copies data")
    for i, a in enumerate(args):
        if a.startswith("if="):
            e.reads.append((i, a[3:]))
        elif a.startswith("of="):
            e.writes = [*e.writes, (i, a[3:])]
    return e


# -- programs that run code given in their arguments ----------------------------------------

_AWK = grammar(
    short="F= v= f= e= i= l= E= W= d? o? p? D?",
    long="field-separator= assign= file= source= include= load= exec= dump-variables? pretty-print? profile? "
    "debug? characters-as-bytes traditional copyright gen-pot help lint? no-optimize non-decimal-data optimize "
    "posix re-interval sandbox trace use-lc-numeric version bignum csv",
    aliases="F:field-separator v:assign f:file e:source i:include l:load E:exec d:dump-variables "
    "o:pretty-print p:profile D:debug",
)
_AWK_STRING = r'"((?:[^"\\]|\\.)*)"'
_AWK_COMMANDS = (re.compile(r"\bsystem\s*\(\s*" + _AWK_STRING), re.compile(r"\|\s*&?\s*" + _AWK_STRING),
                 re.compile(_AWK_STRING + r"\s*\|\s*&?\s*getline\b"))
_AWK_PRINT_TO = re.compile(r"\bprintf?\b[^;{}\n]*?>>?\s*(" + _AWK_STRING + r")?")
_AWK_RUNS = re.compile(r"\bsystem\s*\(|(?<!\|)\|(?!\|)|@load\b|@include\b")
_ASSIGNMENT_OPERAND = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _awk_programs(p: ParsedArgs) -> tuple[list[str], int | None]:
    """The program texts awk runs, and the operand index of the one given as an operand."""
    texts = [o.value for o in p.values("source") if o.value is not None]
    if texts or p.values("file", "exec"):
        return texts, None
    return ([p.args[p.operands[0]]], 0) if p.operands else ([], None)


def awk_commands(args: list[str]) -> list[str]:
    """Shell commands written literally in an awk program (``system("...")``, ``print | "..."``)."""
    out: list[str] = []
    for text in _awk_programs(parse_args(_AWK, args))[0]:
        for rx in _AWK_COMMANDS:
            out += [m.group(1) for m in rx.finditer(text)]
    return out


@family("awk", "gawk", "mawk", "nawk")
def _awk(args: list[str]) -> Effects:
    p = parse_args(_AWK, args)
    texts, program_at = _awk_programs(p)
    operands = [(i, p.args[i]) for k, i in enumerate(p.operands) if k != program_at]
    e = Effects(reads=[r for r in operands if not _ASSIGNMENT_OPERAND.match(r[1])] + _vals(p, "file", "exec",
                                                                                          "include"))
    if p.values("file", "exec", "include", "load") or p.has("load") or not texts:
        e.runs_program = "awk runs a program the analysis cannot read (-f, -i, -l or none)"
    writes: list[Ref] = _vals(p, "dump-variables", "pretty-print", "profile")
    for text in texts:
        if _AWK_RUNS.search(text):
            e.runs_program = e.runs_program or "awk program runs commands (system(), pipes, @load)"
        for m in _AWK_PRINT_TO.finditer(text):
            if m.group(2) is None:
                e.runs_program = e.runs_program or "awk program prints to a file it names at run time"
            else:
                writes.append((-1, m.group(2)))
    if writes or p.has("dump-variables", "pretty-print", "profile"):
        e.writes = writes
        e.side_effect = "awk writes files"
    return e


_VIM_VALUED = frozenset({"-c", "--cmd", "-S", "-s", "-u", "-U", "-i", "-w", "-W", "-T", "-t", "-q", "-r",
                         "--servername", "--remote-send", "--remote-expr", "-V"})
_VIM_CODE = frozenset({"-c", "--cmd", "-S", "-s", "-u", "--remote-send", "--remote-expr"})


def vim_commands(args: list[str]) -> tuple[list[str], list[Ref], list[Ref]]:
    """Ex commands vim runs from its arguments, the files it edits, the files its options write."""
    cmds: list[str] = []
    files: list[Ref] = []
    writes: list[Ref] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            files += [(j, args[j]) for j in range(i + 1, len(args))]
            break
        if a.startswith("+") and len(a) > 1:
            body = a[1:]
            if not (body.isdigit() or body.startswith("/")):
                cmds.append(body)
        elif a in _VIM_VALUED or (a[:2] in _VIM_VALUED and len(a) > 2 and not a.startswith("--")):
            value = args[i + 1] if a in _VIM_VALUED and i + 1 < len(args) else (a[2:] if a not in _VIM_VALUED
                                                                                    else "")
            opt = a if a in _VIM_VALUED else a[:2]
            if opt in _VIM_CODE:
                cmds.append(value if opt in ("-c", "--cmd", "--remote-send", "--remote-expr") else f"source {value}")
            if opt in ("-w", "-W"):
                writes.append((i + 1 if a in _VIM_VALUED else i, value))
            i += 2 if a in _VIM_VALUED else 1
            continue
        elif not a.startswith("-") or a == "-":
            files.append((i, a))
        i += 1
    return cmds, files, writes


def vim_shell_commands(args: list[str]) -> list[str]:
    """Shell text in vim's ex commands (``:!cmd``, ``r !cmd``, ``system("cmd")``)."""
    out: list[str] = []
    for cmd in vim_commands(args)[0]:
        if "!" in cmd:
            out.append(cmd.split("!", 1)[1])
        out += [m.group(1) for m in re.finditer(r"system\s*\(\s*[\"']([^\"']*)[\"']", cmd)]
    return out


@family("vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "rvim", "rview", "evim", "gview")
def _vim(args: list[str]) -> Effects:
    cmds, files, writes = vim_commands(args)
    e = Effects(reads=files, writes=files + writes, side_effect="an editor writes the files it opens")
    if cmds:
        e.runs_program = "vim runs ex commands from its arguments (-c, +cmd, -S, -s, -u)"
    return e


def less_commands(args: list[str]) -> list[str]:
    """Shell text in less's initial commands (``+!cmd``, ``+|mark cmd``)."""
    out = []
    for a in args:
        if a == "--":
            break
        if a.startswith("+") and ("!" in a or "|" in a):
            out.append(a.split("!", 1)[1] if "!" in a else a.split("|", 1)[1][1:])
    return out


_LESS = grammar(short="b= h= j= k= o= O= p= P= t= T= x= y= z= #=",
                long="log-file= LOG-FILE= lesskey-file= tag= pattern=", aliases="k:lesskey-file o:log-file O:LOG-FILE")


@family("less")
def _less(args: list[str]) -> Effects:
    p = parse_args(_LESS, args)
    e = Effects(reads=[r for r in _ops(p) if not r[1].startswith("+")] + _vals(p, "lesskey-file"))
    logs = _vals(p, "log-file", "LOG-FILE")
    if logs:
        e.writes = logs
        e.side_effect = "less -o writes a log file"
    if less_commands(args):
        e.runs_program = "less runs a shell command from its initial commands (+!cmd)"
    return e


#: Commands whose arguments can hold shell text they run, and how to find it.
EMBEDDED_SCRIPTS: dict[str, Callable[[list[str]], list[str]]] = {
    **{n: awk_commands for n in ("awk", "gawk", "mawk", "nawk")},
    **{n: vim_shell_commands for n in ("vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "rvim", "rview", "evim",
                                       "gview")},
    "less": less_commands, "more": less_commands,
}


def hidden_writes(name: str, args: list[str], git: GitCall | None = None) -> str | None:
    """Why a command writes files named where the analysis cannot look (inside an archive or
    a patch), or None."""
    opts = [a for a in args if a.startswith("-")]
    if name == "patch" and not any(a == "--dry-run" or (a.startswith("--dry") and "--dry-run".startswith(a))
                                   for a in opts):
        return "patch writes the files its patch names"
    if name in ("unzip", "tar", "bsdtar", "cpio", "7z", "7za", "7zr"):
        eff = effects(name, args)
        return eff.side_effect if eff is not None and eff.into else None
    if name == "git":
        call = git or git_call(args)
        sub = args[call.sub] if call.sub < len(args) else ""
        rest = args[call.sub + 1:]
        if sub == "am" or (sub == "apply" and not (
                any(a in ("--check", "--stat", "--numstat", "--summary") for a in rest) and "--apply" not in rest)):
            return f"git {sub} writes the files its patch names"
    return None


@family("shuf")
def _shuf(args: list[str]) -> Effects:
    p = parse_args(grammar(short="e i= n= o=", long="echo input-range= head-count= output= random-source= repeat "
                           "zero-terminated", aliases="e:echo i:input-range n:head-count o:output"), args)
    e = Effects(reads=([] if p.has("echo", "input-range") else _ops(p)) + _vals(p, "random-source"))
    if p.values("output"):
        e.writes = _vals(p, "output")
        e.side_effect = "shuf -o writes a file"
    return e


_SPLIT = grammar(short="a= b= C= d e l= n= t= x", long="suffix-length= additional-suffix= bytes= line-bytes= "
                 "lines= number= separator= numeric-suffixes? hex-suffixes? elide-empty-files unbuffered filter= "
                 "verbose")
_CSPLIT = grammar(short="b= f= n= k s z", long="suffix-format= prefix= digits= keep-files quiet silent "
                  "elide-empty-files suppress-matched", aliases="f:prefix")


def _pieces(prefix: list[Ref], default: str) -> list[Ref]:
    """The files written beside a prefix (``PREFIXaa``, ``xx00`` ...), as one pattern each."""
    return [(i, v + "*") for i, v in prefix] or [(-1, default + "*")]


@family("split")
def _split(args: list[str]) -> Effects:
    """``split [IN [PREFIX]]``: the pieces are written beside the prefix."""
    p = parse_args(_SPLIT, args)
    ops = _ops(p)
    e = Effects(reads=ops[:1], writes=_pieces(ops[1:2], "x"), side_effect="split writes the pieces")
    if p.values("filter"):
        e.runs_program = "split --filter runs a shell command"
    return e


@family("csplit")
def _csplit(args: list[str]) -> Effects:
    """``csplit [-f PREFIX] IN PATTERN...``: the pieces are written beside the prefix."""
    p = parse_args(_CSPLIT, args)
    ops = _ops(p)
    return Effects(reads=ops[:1], writes=_pieces(_vals(p, "prefix"), "xx"), side_effect="csplit writes the pieces")


# -- more readers and writers ---------------------------------------------------------------

family("join")(_readers(grammar(short="a= e= o= t= v= 1= 2= j=", long="ignore-case check-order nocheck-order "
                                "header zero-terminated help version")))
family("fmt")(_readers(grammar(short="w= p= g=", long="width= prefix= goal= crown-margin tagged-paragraph "
                               "split-only uniform-spacing help version")))
family("pr")(_readers(grammar(short="h= l= w= W= o= N= S? e? i? n? s?", long="header= length= width= page-width= "
                              "indent= first-line-number= sep-string? separator? expand-tabs? output-tabs? "
                              "number-lines? columns= pages= across show-control-chars double-space form-feed "
                              "join-lines merge no-file-warnings omit-header omit-pagination show-nonprinting "
                              "truncate-lines help version")))
family("envsubst")(lambda args: Effects())  # its operand is a list of variable names, not a file


@family("look")
def _look(args: list[str]) -> Effects:
    """``look [-bdf] [-t C] STRING [FILE]``: the first operand is the word looked up."""
    p = parse_args(grammar(short="t=", long="alternative alphanum ignore-case terminate= help version"), args)
    return Effects(reads=_ops(p)[1:2])


_DIFF3 = grammar(short="L=", long="label= diff-program= easy-only overlap-only ed show-all show-overlap initial-tab "
                 "merge text strip-trailing-cr help version", aliases="L:label m:merge")


@family("diff3")
def _diff3(args: list[str]) -> Effects:
    p = parse_args(_DIFF3, args)
    e = Effects(reads=_ops(p))
    if _touches(p, ("diff-program",)):
        e.runs_program = "diff3 --diff-program runs a program"
    return e


_SDIFF = grammar(short="o= w= I=", long="output= width= diff-program= ignore-matching-lines= tabsize= expand-tabs "
                 "ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space "
                 "ignore-blank-lines left-column suppress-common-lines minimal speed-large-files "
                 "strip-trailing-cr text help version", aliases="o:output")


@family("sdiff")
def _sdiff(args: list[str]) -> Effects:
    p = parse_args(_SDIFF, args)
    e = Effects(reads=_ops(p), writes=_vals(p, "output"))
    if e.writes:
        e.side_effect = "sdiff -o writes the merged file"
        e.runs_program = "sdiff -o runs an editor on request"
    if _touches(p, ("diff-program",)):
        e.runs_program = "sdiff --diff-program runs a program"
    return e


_ICONV = grammar(short="f= t= o=", long="from-code= to-code= output= list silent verbose help usage version",
                 aliases="f:from-code t:to-code o:output l:list c:omit-invalid s:silent")


@family("iconv")
def _iconv(args: list[str]) -> Effects:
    p = parse_args(_ICONV, args)
    e = Effects(reads=_ops(p), writes=_vals(p, "output"))
    if e.writes:
        e.side_effect = "iconv -o writes a file"
    return e


family("mkfifo")(_writers(grammar(short="m= Z?", long="mode= context? help version")))
family("sponge")(_writers(grammar()))
family("fallocate")(_writers(grammar(short="l= o=", long="length= offset= collapse-range dig-holes insert-range "
                                     "keep-size punch-hole zero-range posix verbose help version")))


@family("mknod")
def _mknod(args: list[str]) -> Effects:
    p = parse_args(grammar(short="m= Z?", long="mode= context? help version"), args)
    return Effects(writes=_ops(p)[:1], side_effect="mknod makes a special file")


#: openssl options (one dash, one word) whose value is a file it reads / writes.
_OPENSSL_READS = frozenset({
    "in", "key", "inkey", "config", "CAfile", "cert", "signkey", "CA", "CAkey", "certfile", "rand", "kfile",
    "paramfile", "peerkey", "sigfile", "signature", "extfile", "untrusted", "CRLfile", "CRL", "verify", "prverify",
    "issuer", "rkey", "recip", "content", "dhparam", "chain", "crl", "req", "revoke", "infiles", "ss_cert", "spkac",
    "data", "pubin_file", "cert_chain", "dcert", "dkey", "CApath", "keyfile", "policy", "reqin", "respin",
    "VAfile", "index", "extensions_file", "kdfopt_file", "macopt_file", "pkeyopt_file", "xkey", "xcert",
    "xchain", "key2", "cert2", "dhparam_file", "psk_session", "sess_in", "keylogfile_in",
})
_OPENSSL_WRITES = frozenset({"out", "keyout", "writerand", "sigout", "CAserial", "reqout", "respout", "sess_out",
                             "keylogfile", "msglog", "trace_out", "outdir", "cakeyout", "certout", "chainout",
                             "extracertsout", "genkey_out", "rspout", "reqout_only"})
_OPENSSL_CODE = frozenset({"engine", "provider-path", "provider", "keyform_engine", "ssl_client_engine"})


@family("openssl")
def _openssl(args: list[str]) -> Effects:
    e = Effects(side_effect="openssl writes keys and files")
    writes: list[Ref] = []
    i = 1 if args and not args[0].startswith("-") else 0
    while i < len(args):
        a = args[i]
        name = a[1:] if a.startswith("-") and not a.startswith("--") else a[2:] if a.startswith("--") else ""
        if name and i + 1 < len(args):
            value = args[i + 1]
            if name in _OPENSSL_READS:
                e.reads.append((i + 1, value))
                i += 2
                continue
            if name in _OPENSSL_WRITES:
                writes.append((i + 1, value))
                i += 2
                continue
            if name in _OPENSSL_CODE:
                e.runs_program = f"openssl -{name} loads code"
                i += 2
                continue
            if name.startswith("pass") and value.startswith("file:"):
                e.reads.append((-1, value[5:]))
                i += 2
                continue
        if not name and a != "-":
            e.reads.append((i, a))
        i += 1
    e.writes = writes
    return e


_GPG = grammar(
    short="o= r= u= R= z= f= k? K? e d s b c a v q n i",
    long="output= recipient= local-user= hidden-recipient= recipient-file= hidden-recipient-file= homedir= "
    "keyring= secret-keyring= primary-keyring= trustdb-name= options= passphrase-file= passphrase= passphrase-fd= "
    "command-file= command-fd= status-file= status-fd= logger-file= logger-fd= attribute-file= attribute-fd= "
    "keyserver= keyserver-options= import-options= export-options= list-options= verify-options= "
    "photo-viewer= exec-path= agent-program= dirmngr-program= compress-algo= cipher-algo= digest-algo= "
    "default-key= default-recipient= trust-model= pinentry-mode= set-filename= comment= faked-system-time= "
    "quick-generate-key? quick-gen-key? quick-add-key? quick-add-uid? default-new-key-algo= s2k-mode= "
    "s2k-count= s2k-digest-algo= s2k-cipher-algo= personal-cipher-preferences= personal-digest-preferences= "
    "personal-compress-preferences= encrypt-to= hidden-encrypt-to= group= max-output= compress-level= "
    "bzip2-compress-level= weak-digest= auto-key-locate= sig-notation= cert-notation= set-notation= "
    "sig-policy-url= cert-policy-url= sig-keyserver-url= default-sig-expire= default-cert-expire= "
    "default-cert-level= min-cert-level= completes-needed= marginals-needed= max-cert-depth= tofu-policy= "
    "encrypt decrypt sign clearsign clear-sign detach-sign detach symmetric armor verify list-keys "
    "list-secret-keys list-sigs check-sigs fingerprint import export export-secret-keys export-secret-subkeys "
    "export-ssh-key gen-key generate-key full-gen-key full-generate-key delete-keys delete-secret-keys "
    "delete-secret-and-public-keys sign-key lsign-key edit-key passwd gen-revoke generate-revocation "
    "refresh-keys recv-keys receive-keys send-keys search-keys fetch-keys update-trustdb check-trustdb "
    "import-ownertrust export-ownertrust encrypt-files decrypt-files verify-files store list-packets "
    "print-md dearmor enarmor gen-random list-config version help batch yes no quiet verbose no-tty "
    "with-colons with-fingerprint with-keygrip with-subkey-fingerprint with-secret textmode no-armor "
    "no-default-keyring no-options no-permission-warning always-trust ignore-time-conflict "
    "ignore-valid-from force-mdc no-auto-key-locate no-greeting throw-keyids no-emit-version "
    "require-secmem dry-run interactive expert openpgp rfc4880 rfc2440 pgp6 pgp7 pgp8 use-agent "
    "no-use-agent show-keyring fast-list-mode allow-weak-digest-algos no-symkey-cache include-key-block "
    "auto-key-retrieve no-auto-key-retrieve locate-keys locate-external-keys show-keys show-key",
    aliases="o:output r:recipient u:local-user R:hidden-recipient f:recipient-file e:encrypt d:decrypt "
    "s:sign b:detach-sign c:symmetric a:armor k:list-keys K:list-secret-keys",
)


@family("gpg", "gpg2")
def _gpg(args: list[str]) -> Effects:
    p = parse_args(_GPG, args)
    e = Effects(side_effect="gpg writes files and its keyring")
    if p.unknown:
        e.opaque = f"gpg {p.unknown[0]} is not in the table"
    if _touches(p, ("photo-viewer", "exec-path", "agent-program", "dirmngr-program")):
        e.runs_program = "gpg runs a program its options name"
    if p.has("options", "command-file"):
        e.opaque = e.opaque or "gpg --options / --command-file read options the analysis cannot see"
    ops = [(i, p.args[i]) for i in p.operands if p.args[i] != "-"]
    operand_files = not p.has("recipient", "local-user") or ops
    e.reads = _vals(p, "recipient-file", "hidden-recipient-file", "passphrase-file", "options", "command-file",
                    "attribute-file") + (ops if operand_files and not p.has(
                        "list-keys", "list-secret-keys", "recv-keys", "receive-keys", "search-keys", "send-keys",
                        "delete-keys", "sign-key", "edit-key", "gen-random", "print-md", "export") else [])
    writes: list[Ref] = [r for r in _vals(p, "output", "status-file", "logger-file") if r[1] != "-"]
    writes += _vals(p, "keyring", "secret-keyring", "primary-keyring", "trustdb-name")
    if p.has("homedir"):
        e.into = _vals(p, "homedir")
    if not p.values("output"):
        if p.has("encrypt", "sign", "symmetric", "detach-sign", "clearsign", "clear-sign", "encrypt-files",
                 "store", "enarmor"):
            writes += [(-1, v + ext) for _i, v in ops for ext in (".gpg", ".asc", ".sig")]
        elif p.has("decrypt-files", "dearmor") or not any(
                o.name in ("decrypt", "verify", "list-packets", "import", "list-keys", "list-secret-keys",
                           "fingerprint", "print-md", "export", "verify-files", "gen-random", "version", "help")
                for o in p.options):
            writes += [(-1, re.sub(r"\.(gpg|asc|pgp|sig)$", "", v)) for _i, v in ops
                       if re.search(r"\.(gpg|asc|pgp|sig)$", v)]
    e.writes = writes
    return e


_YQ_LOAD = re.compile(r"\b(?:load|load_str|load_xml|load_props|load_base64|strload)\s*\(\s*\"((?:[^\"\\]|\\.)*)\"")


@family("yq")
def _yq(args: list[str]) -> Effects:
    """mikefarah and kislyuk yq: the first operand is the expression unless ``--from-file`` gives it."""
    p = parse_args(grammar(short="I= o= p= s= f? C? M? P? r? j? n? N? e? i? x?",
                           long="from-file= expression-file= output-format= input-format= indent= split-exp= "
                           "front-matter= string-interpolation-start= string-interpolation-end= "
                           "properties-separator= csv-separator= xml-attribute-prefix= xml-content-name= "
                           "inplace in-place null-input no-doc nul-output exit-status prettyPrint "
                           "unwrapScalar colors no-colors verbose version help tojson yaml-output "
                           "yaml-roundtrip raw-output slurp exit-status arg= argjson= rawfile= slurpfile= "
                           "header-preprocess",
                           aliases="i:inplace o:output-format p:input-format s:split-exp I:indent "
                           "n:null-input"), args)
    ops = _ops(p)
    if ops and ops[0][1] in ("e", "eval", "ea", "eval-all"):
        ops = ops[1:]
    program_files = _vals(p, "from-file", "expression-file")
    expressions = [] if program_files else [v for _i, v in ops[:1]]
    files = ops if program_files else ops[1:]
    e = Effects(reads=files + program_files)
    for text in expressions:
        e.reads += [(-1, m.group(1)) for m in _YQ_LOAD.finditer(text)]
    if p.has("inplace", "in-place"):
        e.writes = list(files)
        e.side_effect = "yq -i edits files in place"
    if p.has("split-exp"):
        e.into = [(-1, ".")]
        e.side_effect = "yq -s writes files named by an expression"
    return e


from pegboard_permissions_shell import archives as _archives  # noqa: E402  (registers its families)
from pegboard_permissions_shell import scripted as _scripted  # noqa: E402
from pegboard_permissions_shell import transfers as _transfers  # noqa: E402

EMBEDDED_SCRIPTS.update({
    "tar": _archives.tar_commands, "bsdtar": _archives.tar_commands,
    "sqlite3": _scripted.sqlite_commands, "sqlite": _scripted.sqlite_commands,
    "ed": _scripted.ed_commands, "red": _scripted.ed_commands, "scp": _transfers.scp_commands,
})
