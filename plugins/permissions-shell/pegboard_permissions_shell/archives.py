"""File effects of archivers and compressors: what they read, write, and extract where.

Archivers write files whose names are inside the archive, which the analysis cannot read;
what it can know is the directory they land in (``tar -C DIR``, ``unzip -d DIR``,
``cpio -D DIR``, ``7z x -oDIR``): that is reported as ``into`` and judged by Edit rules on
that directory. Members named on the command line are written at their place under it.
Compressors replace their input by the output beside it (or write ``-o FILE``), unless
they only print (``-c``, ``zcat``) or test and list. Options the table does not know make
the command ``opaque``: its operands cannot be told apart, so deny rules cannot be checked.
"""

from __future__ import annotations

import posixpath
import re

from pegboard_permissions_shell.effects import Effects, Ref, family
from pegboard_permissions_shell.options import ParsedArgs, grammar, parse_args, resolve_long

# -- tar ------------------------------------------------------------------------------------

#: GNU tar short options that take a value (bsdtar's ``-s`` does too).
_TAR_VALUED = frozenset("bCfFgHIKLNTVX")
_TAR_FLAGS = frozenset("AcdrtuxavwzjJZkmoOpPSUWhilMnRsBGq?")
_TAR_MODES = {"c": "create", "x": "extract", "t": "list", "r": "append", "u": "update", "A": "catenate",
              "d": "diff"}
_TAR_SHORT_LONG = {"b": "blocking-factor", "C": "directory", "f": "file", "F": "info-script",
                   "g": "listed-incremental", "H": "format", "I": "use-compress-program", "K": "starting-file",
                   "L": "tape-length", "N": "newer", "T": "files-from", "V": "label", "X": "exclude-from",
                   "O": "to-stdout", "P": "absolute-names", "h": "dereference", "s": "transform"}
_TAR = grammar(long=(
    "directory= file= files-from= exclude-from= exclude= to-command= use-compress-program= checkpoint-action= "
    "info-script= new-volume-script= rsh-command= rmt-command= listed-incremental= label= format= owner= "
    "group= mode= mtime= newer= after-date= newer-mtime= blocking-factor= record-size= strip-components= "
    "transform= xform= suffix= index-file= volno-file= tape-length= starting-file= sparse-version= "
    "quoting-style= quote-chars= no-quote-chars= hole-detection= exclude-tag= exclude-tag-under= "
    "exclude-tag-all= pax-option= owner-map= group-map= level= add-file= warning= sort= xattrs-include= "
    "xattrs-exclude= exclude-ignore= exclude-ignore-recursive= set-mtime-format= options= "
    "atime-preserve? backup? checkpoint? occurrence? one-top-level? totals? "
    "create extract get list append update diff compare delete concatenate catenate test-label verbose verify "
    "gzip gunzip ungzip bzip2 xz lzip lzma lzop zstd compress uncompress auto-compress no-auto-compress "
    "absolute-names keep-old-files keep-newer-files skip-old-files overwrite overwrite-dir no-overwrite-dir "
    "unlink-first recursive-unlink remove-files preserve-permissions same-permissions no-same-permissions "
    "preserve-order same-order same-owner no-same-owner numeric-owner touch delay-directory-restore "
    "no-delay-directory-restore keep-directory-symlink dereference hard-dereference ignore-failed-read "
    "ignore-zeros ignore-command-error no-ignore-command-error interactive confirmation seek no-seek sparse "
    "multi-volume force-local show-transformed-names show-stored-names show-defaults show-omitted-dirs utc "
    "full-time block-number check-links one-file-system check-device no-check-device incremental acls "
    "no-acls xattrs no-xattrs selinux no-selinux exclude-backups exclude-caches exclude-caches-all "
    "exclude-caches-under exclude-vcs exclude-vcs-ignores anchored no-anchored ignore-case no-ignore-case "
    "wildcards no-wildcards wildcards-match-slash no-wildcards-match-slash recursion no-recursion null "
    "no-null unquote no-unquote verbatim-files-from no-verbatim-files-from read-full-records restrict help "
    "usage version posix old-archive portability preserve to-stdout clamp-mtime fast-read insecure"))
#: tar options whose value is a program or shell command it runs.
TAR_RUNNING = ("to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script",
               "rsh-command", "rmt-command")
_TAR_RENAMING = ("transform", "xform", "strip-components")


_TarOption = tuple[str, str | None, int]


def _tar_options(args: list[str], bsd: bool) -> tuple[list[_TarOption], list[int], str | None, bool]:
    """(options as (long name, value, index), operand indexes, an option the table does not
    know, whether a cluster was also read as a bundle).

    The first word without a dash is the traditional bundle (``tar xvfC A DIR``): each letter
    that takes a value takes the next word in turn. A dashed cluster follows getopt (``-xvfC``
    gives ``f`` the value ``C``); when its letters also read as a bundle, that reading is
    added too, so a target is never missed whichever way tar reads it."""
    valued = _TAR_VALUED | ({"s"} if bsd else set())
    opts: list[_TarOption] = []
    operands: list[int] = []
    unknown: str | None = None
    both = False

    def short(letter: str) -> str:
        return _TAR_SHORT_LONG.get(letter, letter)

    def bundle(letters: str, start: int) -> int:
        j = start
        for ch in letters:
            if ch in valued and j < len(args):
                opts.append((short(ch), args[j], j))
                j += 1
        return j

    i = 0
    if args and args[0] and not args[0].startswith("-") and re.fullmatch(r"[A-Za-z?]+", args[0]):
        for ch in args[0]:
            if ch not in valued:
                opts.append((short(ch), None, 0))
        i = bundle(args[0], 1)
    while i < len(args):
        a = args[i]
        if a == "--":
            operands.extend(range(i + 1, len(args)))
            break
        if a.startswith("--"):
            given, eq, value = a[2:].partition("=")
            name = resolve_long(_TAR, given)
            if name is None:
                unknown = unknown or a
                i += 1
                continue
            if _TAR.long[name] == "=" and not eq and i + 1 < len(args):
                opts.append((name, args[i + 1], i + 1))
                i += 2
                continue
            opts.append((name, value if eq else None, i))
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            nxt = i + 1
            for k in range(1, len(a)):
                ch = a[k]
                if ch not in valued and ch not in _TAR_FLAGS:
                    unknown = unknown or f"-{ch}"
                    continue
                if ch in valued:
                    rest = a[k + 1:]
                    if rest:
                        opts.append((short(ch), rest, i))
                        if all(c in valued or c in _TAR_FLAGS for c in rest) and any(c in valued for c in rest):
                            bundle(a[k:], i + 1)  # the other reading: successive words
                            both = True
                    elif nxt < len(args):
                        opts.append((short(ch), args[nxt], nxt))
                        nxt += 1
                    break
                opts.append((short(ch), None, i))
            i = nxt
            continue
        operands.append(i)
        i += 1
    return opts, operands, unknown, both


def _tar_effects(args: list[str], bsd: bool = False) -> Effects:
    opts, operands, unknown, both = _tar_options(args, bsd)
    names = {n for n, _v, _i in opts}
    mode = next((_TAR_MODES[n] for n in names if n in _TAR_MODES), None) or next(
        (n for n in names if n in ("create", "extract", "get", "list", "append", "update", "catenate",
                                   "concatenate", "diff", "compare", "delete", "test-label")), "")
    mode = {"get": "extract", "concatenate": "catenate", "compare": "diff"}.get(mode, mode)
    e = Effects(opaque=f"tar {unknown} is not in the table" if unknown else None)
    archives = [(i, v) for n, v, i in opts if n == "file" and v not in (None, "-")]
    e.reads += [(i, v) for n, v, i in opts if n in ("exclude-from", "files-from") and v not in (None, "-")]
    if any(n == "files-from" for n in names):
        e.names_from = "tar -T names the files to archive"
    writes: list[Ref] = [(i, v) for n, v, i in opts if n in ("index-file", "volno-file", "listed-incremental")
                         and v is not None]
    e.reads += [(i, v) for n, v, i in opts if n == "listed-incremental" and v is not None]
    hits = [n for n in names if n in TAR_RUNNING] or (["info-script"] if "-F" in names else [])
    for a in args:  # any prefix of those names counts, even one that is also an option (--checkpoint)
        body = a[2:].split("=", 1)[0] if a.startswith("--") else ""
        if len(body) >= 3 and not hits and any(n.startswith(body) for n in TAR_RUNNING):
            hits = [body]
    if hits:
        e.runs_program = f"tar --{hits[0]} runs a program"
    # -C applies to what follows it, relative to the -C before it.
    where: dict[int, str] = {}
    current = ""
    dirs: list[tuple[int, str]] = []
    cuts = sorted([(i, v) for n, v, i in opts if n == "directory" and v is not None])
    for k in sorted(set(operands) | {i for i, _v in cuts}):
        for i, v in cuts:
            if i == k:
                current = posixpath.join(current, v) if current else v
                dirs.append((i, current))
        if k in operands:
            where[k] = current
    if mode in ("create", "append", "update"):
        e.writes = [*writes, *archives]
        if mode != "create":
            e.reads += archives
        members = [(k if not where[k] else -1, posixpath.join(where[k], args[k]) if where[k] else args[k])
                   for k in operands if args[k] != "-" and not args[k].startswith("@")]
        e.reads += members
        if "no-recursion" not in names:
            e.trees = list(members)
            e.follows_links = "dereference" in names
        if "remove-files" in names:
            e.writes = [*e.writes, *members]
        e.side_effect = "tar writes an archive"
    elif mode in ("catenate", "delete"):
        e.reads += archives + [(k, args[k]) for k in operands if mode == "catenate"]
        e.writes = [*writes, *archives]
        e.side_effect = "tar changes an archive"
    else:
        e.reads += archives
        e.writes = writes
        if writes:
            e.side_effect = "tar writes files"
        roots = [(i, d) for i, d in dirs] or [(-1, ".")]
        if mode == "extract" and "to-stdout" not in names and "to-command" not in names:
            e.side_effect = "tar -x writes the files its archive holds"
            if "absolute-names" in names:
                e.into = [(-1, "/")]
            elif operands and not names & set(_TAR_RENAMING):
                e.into = [(-1, posixpath.join(where[k] or ".", args[k].lstrip("/"))) for k in operands]
                if both:
                    e.into = [*e.into, *roots]
            else:
                e.into = roots
        elif mode == "diff":
            e.trees = roots
    return e


family("tar")(lambda args: _tar_effects(args))
family("bsdtar")(lambda args: _tar_effects(args, bsd=True))


def tar_commands(args: list[str]) -> list[str]:
    """Shell commands tar runs from its options (``--to-command``, ``--checkpoint-action=exec=``...)."""
    out: list[str] = []
    for name, value, _i in _tar_options(args, False)[0]:
        if value is None:
            continue
        if name == "checkpoint-action":
            if value.startswith("exec="):
                out.append(value[5:])
        elif name in TAR_RUNNING:
            out.append(value)
    return out


# -- zip / unzip ----------------------------------------------------------------------------

_ZIP_VALUED = frozenset({"-b", "-n", "-t", "-tt", "-TT", "-P", "-Z", "-s", "-O", "-lf", "-ds",
                         "--temp-path", "--suffixes", "--from-date", "--before-date", "--unzip-command",
                         "--password", "--compression-method", "--split-size", "--output-file", "--out",
                         "--logfile-path", "--dot-size"})
_ZIP_FLAGS = frozenset("0123456789@ADFJLMNRSTUVXcdefghjklmoqruvwyz$!")
_ZIP_LONG_FLAGS = frozenset({
    "--recurse-paths", "--recurse-patterns", "--move", "--delete", "--update", "--freshen", "--test", "--quiet",
    "--verbose", "--junk-paths", "--symlinks", "--encrypt", "--grow", "--fix", "--fixfix", "--filesync",
    "--adjust-sfx", "--unzip-sfx", "--copy-entries", "--copy", "--no-dir-entries", "--no-extra", "--latest-time",
    "--display-bytes", "--display-counts", "--display-dots", "--display-globaldots", "--display-usize",
    "--display-volume", "--show-files", "--sf", "--help", "--version", "--license", "--entry-comments",
    "--archive-comment", "--to-crlf", "--from-crlf", "--log-append", "--log-info", "--must-match",
    "--no-wild", "--wild-stop-dirs", "--names-stdin", "--exclude", "--include", "--fast", "--best",
})


@family("zip")
def _zip(args: list[str]) -> Effects:
    """``zip [OPTIONS] ARCHIVE [FILES...] [-x|-i PATTERNS...]``: the archive is written, the files read."""
    ops: list[Ref] = []
    e = Effects(side_effect="zip writes an archive")
    writes: list[Ref] = []
    recursive = move = delete = False
    unknown: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            ops += [(j, args[j]) for j in range(i + 1, len(args))]
            break
        if a in ("-x", "-i", "--exclude", "--include") or re.fullmatch(r"-[xi]@.+", a):
            if "@" in a:
                e.reads.append((i, a[3:]))
            i += 1
            while i < len(args) and not args[i].startswith("-"):
                i += 1  # patterns, not files
            continue
        name, eq, value = a.partition("=")
        if name in _ZIP_VALUED:
            val_at = i if eq else i + 1
            val = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if name in ("-TT", "--unzip-command"):
                e.runs_program = "zip -TT runs a program"
            if name in ("-O", "--output-file", "--out", "-lf", "--logfile-path") and val_at < len(args):
                writes.append((val_at, val))
            i = val_at + 1
            continue
        if a.startswith("--"):
            if a in ("--recurse-paths", "--recurse-patterns"):
                recursive = True
            elif a == "--move":
                move = True
            elif a == "--delete":
                delete = True
            elif a not in _ZIP_LONG_FLAGS:
                unknown = unknown or a
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                if ch not in _ZIP_FLAGS:
                    unknown = unknown or a
                recursive = recursive or ch in "rR"
                move = move or ch == "m"
                delete = delete or ch == "d"
                if ch == "@":
                    e.names_from = "zip -@ reads the names to archive from its input"
            i += 1
            continue
        ops.append((i, a))
        i += 1
    if unknown:
        e.opaque = f"zip {unknown} is not in the table"
    archive, files = ops[:1], ops[1:]
    if archive and archive[0][1] != "-":
        writes += archive
        if "." not in posixpath.basename(archive[0][1]):
            writes.append((-1, archive[0][1] + ".zip"))
        e.reads += archive
    e.writes = writes
    if not delete:
        e.reads += files
        if recursive:
            e.trees = list(files)
        if move:
            e.writes = [*writes, *files]
    return e


_UNZIP_LISTING = frozenset("lvtzZpc")


@family("unzip")
def _unzip(args: list[str]) -> Effects:
    """``unzip [OPTIONS] ZIP [MEMBERS...] [-x PATTERNS...] [-d DIR]``: members land under DIR."""
    ops: list[int] = []
    exdir: list[Ref] = []
    letters: set[str] = set()
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-x":
            i += 1
            while i < len(args) and not args[i].startswith("-"):
                i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            body = a[1:]
            for k, ch in enumerate(body):
                if ch in "dPIO":
                    rest = body[k + 1:]
                    if rest:
                        value_at, value = i, rest
                    elif i + 1 < len(args):
                        value_at, value = i + 1, args[i + 1]
                    else:  # the option's value is missing: unzip refuses to run
                        value_at, value = -1, ""
                    if ch == "d" and value_at >= 0:
                        exdir.append((value_at, value))
                    i = max(i, value_at)
                    break
                letters.add(ch)
            i += 1
            continue
        ops.append(i)
        i += 1
    e = Effects(reads=[(k, args[k]) for k in ops[:1]])
    if letters & _UNZIP_LISTING:
        return e
    roots = exdir or [(-1, ".")]
    members = [args[k] for k in ops[1:]]
    e.side_effect = "unzip writes the files its archive holds"
    if ":" in letters:
        e.into = [(-1, "/")]  # -: lets names climb out with '..'
    elif members and "j" not in letters and not any(c in m for m in members for c in "*?["):
        e.into = [(-1, posixpath.join(d, m.lstrip("/"))) for _i, d in roots for m in members]
    else:
        e.into = roots
    return e


# -- cpio, 7z -------------------------------------------------------------------------------

_CPIO = grammar(
    short="F= O= I= D= E= H= M= R= C=",
    long="file= directory= pattern-file= format= message= owner= io-size= block-size= rsh-command= "
    "create extract pass-through list append absolute-filenames no-absolute-filenames to-stdout null "
    "make-directories nonmatching link dereference preserve-modification-time numeric-uid-gid rename "
    "unconditional verbose dot quiet sparse reset-access-time no-preserve-owner swap swap-bytes swap-halfwords "
    "only-verify-crc force-local help usage version reproducible ignore-devno renumber-inodes device-independent "
    "warning= extract-over-symlinks",
    aliases="o:create i:extract p:pass-through t:list F:file D:directory E:pattern-file A:append "
    "O:file I:file")


@family("cpio")
def _cpio(args: list[str]) -> Effects:
    p = parse_args(_CPIO, args)
    e = Effects(reads=_given(p, "pattern-file"))
    if p.unknown:
        e.opaque = f"cpio {p.unknown[0]} is not in the table"
    archives = _given(p, "file")
    if p.has("rsh-command"):
        e.runs_program = "cpio --rsh-command runs a program"
    dirs = _given(p, "directory")
    if p.has("create"):
        e.writes = archives
        e.names_from = "cpio -o reads the names to archive from its input"
        e.side_effect = "cpio -o writes an archive"
        if p.has("append"):
            e.reads += archives
    elif p.has("pass-through"):
        ops = [(i, p.args[i]) for i in p.operands]
        e.names_from = "cpio -p reads the names to copy from its input"
        e.into = ops[:1] or [(-1, ".")]
        e.side_effect = "cpio -p copies files"
    elif p.has("extract") and not p.has("list", "to-stdout", "only-verify-crc"):
        e.reads += archives
        e.into = [(-1, "/")] if p.has("absolute-filenames") else (dirs or [(-1, ".")])
        e.side_effect = "cpio -i writes the files its archive holds"
    else:
        e.reads += archives
    return e


@family("7z", "7za", "7zr")
def _7z(args: list[str]) -> Effects:
    """``7z COMMAND ARCHIVE [FILES] [-oDIR] [-so]``: switches always carry their value attached."""
    switches = [a for a in args if a.startswith("-") and len(a) > 1]
    ops = [(i, a) for i, a in enumerate(args) if not (a.startswith("-") and len(a) > 1)]
    cmd = ops[0][1] if ops else ""
    e = Effects()
    e.reads = [(i, a.split("@", 1)[1]) for i, a in enumerate(args) if re.match(r"-[ix]r?[-0]?@", a)]
    archive = ops[1:2]
    files = [r for r in ops[2:] if not r[1].startswith("@")]
    if any(r[1].startswith("@") for r in ops[2:]):
        e.names_from = "7z @LIST names the files"
        e.reads += [(i, v[1:]) for i, v in ops[2:] if v.startswith("@")]
    if cmd in ("x", "e"):
        e.reads += archive
        if "-so" not in switches:
            out = [(i, a[2:]) for i, a in enumerate(args) if a.startswith("-o") and len(a) > 2]
            e.into = out or [(-1, ".")]
            e.side_effect = "7z writes the files its archive holds"
    elif cmd in ("a", "u", "d", "rn"):
        e.reads += archive + (files if cmd in ("a", "u") else [])
        e.writes = archive
        e.trees = files if cmd in ("a", "u") else []
        e.side_effect = "7z writes an archive"
    else:
        e.reads += archive
    return e


# -- compressors ----------------------------------------------------------------------------

_SUFFIX = {"gzip": ".gz", "pigz": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma", "lzip": ".lz",
           "zstd": ".zst", "lz4": ".lz4", "brotli": ".br", "compress": ".Z"}
#: name -> (compressor, decompresses, prints to stdout)
_COMPRESSORS: dict[str, tuple[str, bool, bool]] = {
    "gzip": ("gzip", False, False), "gunzip": ("gzip", True, False), "zcat": ("gzip", True, True),
    "pigz": ("pigz", False, False), "unpigz": ("pigz", True, False),
    "bzip2": ("bzip2", False, False), "bunzip2": ("bzip2", True, False), "bzcat": ("bzip2", True, True),
    "xz": ("xz", False, False), "unxz": ("xz", True, False), "xzcat": ("xz", True, True),
    "lzma": ("lzma", False, False), "unlzma": ("lzma", True, False), "lzcat": ("lzma", True, True),
    "lzip": ("lzip", False, False),
    "zstd": ("zstd", False, False), "unzstd": ("zstd", True, False), "zstdcat": ("zstd", True, True),
    "zstdmt": ("zstd", False, False),
    "lz4": ("lz4", False, False), "unlz4": ("lz4", True, False), "lz4cat": ("lz4", True, True),
    "brotli": ("brotli", False, False), "compress": ("compress", False, False),
    "uncompress": ("compress", True, False),
}
_COMPRESS_GRAMMARS = {
    "gzip": grammar(short="S= b= p=", long="stdout to-stdout decompress uncompress force help keep list license "
                    "no-name name quiet recursive suffix= test verbose version fast best rsyncable synchronous "
                    "processes= blocksize= independent zlib zip rle huffman no-time alias= comment=",
                    aliases="c:stdout d:decompress k:keep l:list r:recursive S:suffix t:test"),
    "bzip2": grammar(long="stdout decompress compress keep force test small quiet verbose license version fast "
                     "best help", aliases="c:stdout d:decompress z:compress k:keep t:test"),
    "xz": grammar(short="T= F= C= S= M=", long="compress decompress uncompress test list keep force stdout "
                  "to-stdout suffix= files? files0? format= check= threads= memlimit= memlimit-compress= "
                  "memlimit-decompress= memlimit-mt-decompress= block-size= block-list= flush-timeout= "
                  "single-stream no-sparse ignore-check extreme fast best quiet verbose no-warn robot "
                  "info-memory help long-help version no-adjust lzma1= lzma2= x86? arm? armthumb? arm64? "
                  "powerpc? ia64? sparc? riscv? delta? filters= filters1= filters2= filters3= filters4= "
                  "filters5= filters6= filters7= filters8= filters9= filters-help",
                  aliases="z:compress d:decompress t:test l:list k:keep c:stdout S:suffix"),
    "zstd": grammar(short="o= D= T? B? b? e? i? M? L?", long="output-dir-flat= output-dir-mirror= filelist= "
                    "patch-from= trace= format= memory= stream-size= size-hint= target-compressed-block-size= "
                    "long? fast? adapt? ultra rm keep stdout decompress uncompress compress force quiet verbose "
                    "version help list test train? no-progress progress exclude-compressed check no-check "
                    "sparse no-sparse content-size no-content-size dictID no-dictID asyncio no-asyncio "
                    "row-match-finder no-row-match-finder threads= auto-threads= single-thread rsyncable "
                    "mmap-dict no-mmap-dict show-default-cparams pass-through no-pass-through recursive "
                    "maxdict= dictID= split= priority= zstd= compress-literals no-compress-literals "
                    "jobsize= overlap= ldm-hash-log= block-size= max= mt= train-cover? train-fastcover? "
                    "train-legacy? sparse",
                    aliases="o:output d:decompress z:compress c:stdout k:keep t:test l:list r:recursive "
                    "D:dictionary"),
}
_COMPRESS_GRAMMARS["pigz"] = _COMPRESS_GRAMMARS["gzip"]
for _n in ("lzma", "lzip"):
    _COMPRESS_GRAMMARS[_n] = _COMPRESS_GRAMMARS["xz"]
_COMPRESS_GRAMMARS["lz4"] = grammar(
    short="B? b? e? i? T?", long="rm keep stdout to-stdout decompress uncompress compress force quiet verbose "
    "version help list test best fast? multiple sparse no-sparse favor-decSpeed content-size no-frame-crc "
    "frame-crc", aliases="c:stdout d:decompress z:compress k:keep t:test l:list m:multiple")
_COMPRESS_GRAMMARS["brotli"] = grammar(
    short="o= q= w= S= D=", long="output= quality= lgwin= suffix= dictionary= stdout decompress force keep rm "
    "jobs no-copy-stat test verbose version help best large_window= comment= squash",
    aliases="o:output c:stdout d:decompress f:force k:keep j:rm t:test S:suffix")
_COMPRESS_GRAMMARS["compress"] = grammar(short="b=", aliases="c:stdout d:decompress r:recursive")
_KEEPS_BY_DEFAULT = frozenset({"zstd", "lz4", "brotli"})


def _compressor(name: str) -> None:
    program, decompresses, prints = _COMPRESSORS[name]
    g = _COMPRESS_GRAMMARS[program]

    def fn(args: list[str]) -> Effects:
        p = parse_args(g, args)
        e = Effects(opaque=f"{name} {p.unknown[0]} is not in the table" if p.unknown else None)
        ops = [(i, p.args[i]) for i in p.operands if p.args[i] != "-"]
        lists = p.values("files", "files0", "filelist")
        if lists or p.has("files", "files0"):
            e.names_from = f"{name} reads the names of its inputs from a file"
            e.reads += [(o.index, o.value) for o in lists if o.value]
        e.reads += [(o.index, o.value) for o in p.values("dictionary", "patch-from") if o.value]
        explicit: list[Ref] = [(o.index, o.value) for o in p.values("output", "trace") if o.value]
        if program == "lz4" and not p.has("multiple") and len(ops) == 2:
            ops, explicit = ops[:1], [*explicit, ops[1]]
        e.reads += ops
        if prints or p.has("stdout", "test", "list", "-h", "help", "version", "-V"):
            e.writes = [(o.index, o.value) for o in p.values("trace") if o.value]
            return e
        decompress = decompresses or p.has("decompress")
        suffix = next((o.value for o in p.values("suffix") if o.value), _SUFFIX[program])
        dirs = [(o.index, o.value) for o in p.values("output-dir-flat", "output-dir-mirror") if o.value]
        writes: list[Ref] = list(explicit)
        if p.has("recursive"):
            e.trees = list(ops)
            e.into = [*ops, *dirs]
        elif not explicit:
            for _i, v in ops:
                out = v[: -len(suffix)] if decompress and v.endswith(suffix) else (
                    re.sub(r"\.t[gbx]z$|\.tzst$", ".tar", v) if decompress else v + suffix)
                if dirs:
                    e.into = dirs
                elif out != v:
                    writes.append((-1, out))
        keep = p.has("keep") or (program in _KEEPS_BY_DEFAULT and not p.has("rm"))
        if not keep:
            writes += ops  # the input is removed
        e.writes = writes
        if writes or e.into:
            e.side_effect = f"{name} writes files"
        return e

    family(name)(fn)


for _name in _COMPRESSORS:
    _compressor(_name)


# -- patch ----------------------------------------------------------------------------------

_PATCH = grammar(
    short="p= F= B= Y= z= V= i= o= r= d= D= g=",
    long="strip= fuzz= prefix= basename-prefix= suffix= version-control= input= output= reject-file= directory= "
    "ifdef= get= quoting-style= reject-format= read-only= debug= backup backup-if-mismatch "
    "no-backup-if-mismatch context ed normal unified forward reverse batch force silent quiet dry-run "
    "remove-empty-files binary verbose posix merge? follow-symlinks ignore-whitespace set-time set-utc help "
    "version",
    aliases="p:strip F:fuzz B:prefix Y:basename-prefix z:suffix V:version-control i:input o:output "
    "r:reject-file d:directory D:ifdef g:get e:ed N:forward R:reverse t:batch f:force s:silent E:remove-empty-files "
    "b:backup c:context n:normal u:unified l:ignore-whitespace T:set-time Z:set-utc")


@family("patch")
def _patch(args: list[str]) -> Effects:
    """``patch [OPTIONS] [ORIGFILE [PATCHFILE]]``: the files the patch names land under ``-d DIR``."""
    p = parse_args(_PATCH, args)
    ops = [(i, p.args[i]) for i in p.operands]
    e = Effects(reads=[*_given(p, "input"), *ops[1:2]], side_effect="patch edits files")
    if p.unknown:
        e.opaque = f"patch {p.unknown[0]} is not in the table"
    if p.has("ed"):
        e.runs_program = "patch -e runs ed on the patch"
    if p.has("dry-run"):
        return e
    outputs = _given(p, "output")
    e.writes = [*outputs, *_given(p, "reject-file"), *([] if outputs else ops[:1])]
    e.reads += ops[:1]
    e.into = _given(p, "directory") or [(-1, ".")]
    return e


def _given(p: ParsedArgs, name: str) -> list[Ref]:
    """The values of option ``name`` (``-`` is the standard input or output, not a file)."""
    return [(o.index, o.value) for o in p.values(name) if o.value and o.value != "-"]
