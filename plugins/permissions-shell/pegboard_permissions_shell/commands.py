"""Knowledge about shell commands: wrappers, the read-only set, file operands, known traps.

Kept apart from the matching logic because it is data plus small validators: which
wrappers are stripped before matching (and how many of their arguments go with them, and
which of their options write or read files), which commands run without a prompt and under
what conditions. The per-family option grammars and file effects live in ``effects``; the
generic operand rule here covers commands without a family. Every validator answers
"not read-only" when unsure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pegboard_permissions_shell.effects import Effects, effects, git_call, git_option_danger, git_side_effect

#: Environment variables whose assignment in front of a command never changes what runs.
SAFE_ENV_VARS = frozenset({
    "NODE_ENV", "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
    "TERM", "COLUMNS", "LINES", "CI", "DEBUG", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "GIT_PAGER_IN_USE", "PAGER_DISABLE", "TIMEFORMAT",
    "COLORTERM", "NPM_CONFIG_LOGLEVEL", "VERBOSE",
})
_SAFE_ENV_PREFIXES = ("LC_",)


def safe_env_var(name: str) -> bool:
    return name in SAFE_ENV_VARS or name.startswith(_SAFE_ENV_PREFIXES)


@dataclass(frozen=True)
class WrapperSpec:
    """How to skip a wrapper's own arguments to reach the command it runs."""

    value_opts: frozenset[str] = frozenset()  # short/long options that take a separate value
    positionals: int = 0  # positional arguments before the command (timeout's duration ...)
    script_opts: frozenset[str] = frozenset()  # options whose value is a shell script
    joins_args: bool = False  # the rest is joined and run by a shell (watch, ssh)
    write_opts: frozenset[str] = frozenset()  # options whose value is a file the wrapper writes
    read_opts: frozenset[str] = frozenset()  # options whose value is a file the wrapper reads
    chdir_opts: frozenset[str] = frozenset()  # options that run the command in another directory
    flags: frozenset[str] = frozenset()  # long options without a value (for abbreviations)
    abbreviations: bool = True  # getopt_long: unambiguous prefixes of long options
    writes_positional: bool = False  # the positional argument is a file it opens (flock)
    positional_unless: frozenset[str] = frozenset()  # options that replace the positional (taskset -c)


def _ws(value_opts: str = "", positionals: int = 0, script_opts: str = "", joins: bool = False, *,
        writes: str = "", reads: str = "", chdir: str = "", flags: str = "", abbreviations: bool = True,
        writes_positional: bool = False, unless: str = "") -> WrapperSpec:
    def s(text: str) -> frozenset[str]:
        return frozenset(text.split())

    return WrapperSpec(s(value_opts) | s(writes) | s(reads) | s(chdir), positionals, s(script_opts), joins,
                       s(writes), s(reads), s(chdir), s(flags), abbreviations, writes_positional, s(unless))


#: Process wrappers stripped before allow matching (a fixed list, not configurable).
ALLOW_STRIP_WRAPPERS: dict[str, WrapperSpec] = {
    "timeout": _ws("-s --signal -k --kill-after", positionals=1, flags="--preserve-status --foreground --verbose"),
    "time": _ws("-f --format", writes="-o --output", flags="--append --portability --verbose --quiet --help"),
    "nice": _ws("-n --adjustment"),
    "nohup": _ws(),
    "stdbuf": _ws("-i -o -e --input --output --error"),
    "command": _ws(),
    "builtin": _ws(),
    "noglob": _ws(),
}

#: Wrappers that run another command; deny and ask rules see through all of them. A prefix
#: allow rule never approves a command behind one of these (only an exact rule can).
EXEC_WRAPPERS: dict[str, WrapperSpec] = {
    "exec": _ws("-a"),
    "sudo": _ws("-u -g -h -C -p -r -t -T -U --user --group --host --prompt --role --type "
                "--command-timeout --other-user --close-from", chdir="-D --chdir"),
    "doas": _ws("-u -C"),
    "run0": _ws("-u -g -D --user --group --chdir --setenv --property --description --unit"),
    "env": _ws("-u --unset", script_opts="-S --split-string", chdir="-C --chdir",
               flags="--ignore-environment --null --block-signal --default-signal --ignore-signal "
               "--list-signal-handling --debug"),
    "watch": _ws("-n --interval -d --differences -q --equexit --chgexit", joins=True),
    "ionice": _ws("-c -n -p -P -u --class --classdata --pid --pgid --uid"),
    "setsid": _ws(),
    "flock": _ws("-E -w --conflict-exit-code --timeout", positionals=1, script_opts="-c --command",
                 writes_positional=True),
    "chroot": _ws("--userspec --groups", positionals=1),
    "nsenter": _ws("-t -S -G --target --setuid --setgid -m -u -i -n -p -C -U -T -r -w"),
    "unshare": _ws("--propagation --setgroups --map-user --map-group"),
    "runuser": _ws("-u -g -G --user --group --supp-group", script_opts="-c --command"),
    "su": _ws("-g -G -s --group --supp-group --shell", positionals=1, script_opts="-c --command"),
    "xargs": _ws("-n -I -L -P -d -E -s --max-args --max-lines --max-procs --delimiter --eof --max-chars "
                 "--process-slot-var", reads="-a --arg-file", flags="--null --no-run-if-empty --verbose --exit "
                 "--interactive --open-tty --show-limits --replace"),
    "caffeinate": _ws("-t -w"),
    "unbuffer": _ws(),
    "torsocks": _ws(),
    "proxychains": _ws("-f"),
    "proxychains4": _ws("-f"),
    "firejail": _ws(),
    "strace": _ws("-e -p -s -u -E -I -a -b -O -P -S -X", writes="-o --output"),
    "ltrace": _ws("-e -p -s -u -a -n", writes="-o --output"),
    "nocorrect": _ws(),
    "coproc": _ws(),
    "parallel": _ws("-j -S --jobs --sshlogin -N --max-args", joins=True),
    "ssh": _ws("-p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B", positionals=1, joins=True),
    "script": _ws("-E --echo", positionals=1, script_opts="-c --command",
                  writes="-O -I -T -B --log-out --log-in --log-timing --log-io", writes_positional=True),
    "systemd-run": _ws("-u -p -E --unit --property --setenv --description --slice --uid --gid"),
    "valgrind": _ws(),
    "gdb": _ws(),
    "dotenv": _ws("-e", reads="-f"),
    "taskset": _ws("-c --cpu-list", positionals=1, flags="--all-tasks --pid", unless="-c --cpu-list -p --pid"),
    "chrt": _ws("-T -P -D --sched-runtime --sched-period --sched-deadline", positionals=1),
    "numactl": _ws("-C -N -m -p -i -w --physcpubind --cpunodebind --membind --preferred --interleave "
                   "--weighted-interleave --preferred-many"),
    "prlimit": _ws("-p --pid"),
    "setpriv": _ws("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --selinux-label "
                   "--apparmor-profile --landlock-access --landlock-rule"),
    "cgexec": _ws("-g"),
    "fakeroot": _ws("-l -f -s -i --lib --faked"),
    "eatmydata": _ws(),
    "faketime": _ws("-m -f", positionals=1),
    "sg": _ws(positionals=1, script_opts="-c"),
    "gosu": _ws(positionals=1),
    "su-exec": _ws(positionals=1),
    "setuidgid": _ws(positionals=1),
    "chpst": _ws("-u -U -b -e -/ -n -l -L -m -d -o -p -f -c"),
    "envdir": _ws(positionals=1),
    "softlimit": _ws("-m -a -d -o -p -f -c -r -s -t"),
    "tini": _ws("-s -p -e -g -w"),
    "dumb-init": _ws("-r --rewrite"),
    "catchsegv": _ws(),
    "rlwrap": _ws("-a -b -C -D -f -F -g -H -I -l -N -O -p -P -q -S -w -z"),
    "nocache": _ws(),
    "trickle": _ws("-d -u -w -t -l -n"),
    "torify": _ws(),
    "tsocks": _ws(),
    "entr": _ws(),
    "sem": _ws("-j --jobs --id"),
}

#: Dev-env runners: ``runner sub`` prefixes that run the rest as a command.
RUNNERS: dict[tuple[str, ...], WrapperSpec] = {
    ("devbox", "run"): _ws(),
    ("direnv", "exec"): _ws(positionals=1),
    ("mise", "exec"): _ws(),
    ("mise", "x"): _ws(),
    ("npx",): _ws("-p --package -c --call", script_opts="-c --call"),
    ("pnpm", "dlx"): _ws(),
    ("pnpm", "exec"): _ws(),
    ("npm", "exec"): _ws("-p --package -c --call", script_opts="-c --call"),
    ("yarn", "dlx"): _ws(),
    ("yarn", "exec"): _ws(),
    ("bunx",): _ws(),
    ("bun", "x"): _ws(),
    ("uvx",): _ws("--from --with -p --python"),
    ("uv", "run"): _ws("--with -p --python --project --directory --env-file"),
    ("poetry", "run"): _ws(),
    ("pipenv", "run"): _ws(),
    ("pixi", "run"): _ws(),
    ("conda", "run"): _ws("-n -p --name --prefix"),
    ("nix-shell",): _ws("-p -I --packages", script_opts="--run --command"),
    ("docker", "exec"): _ws("-e -u -w --env --user --workdir --env-file", positionals=1),
    ("docker", "run"): _ws("-e -u -w -v -p --env --user --workdir --volume --name --network --entrypoint "
                           "--env-file --mount --platform", positionals=1),
    ("podman", "exec"): _ws("-e -u -w --env --user --workdir", positionals=1),
    ("kubectl", "exec"): _ws("-c -n --container --namespace", positionals=1),
}

#: Shells whose ``-c`` script is parsed and checked like the outer command.
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "fish", "rbash"})

#: Commands that run other commands or code but are not wrappers: never read-only, and
#: a wildcard allow rule does not approve them behind other wrappers.
EVAL_COMMANDS = frozenset({"eval", "source", "."})

_SHORT_FLAG = re.compile(r"^-[A-Za-z0-9]")


@dataclass
class WrapperArgs:
    """A wrapper's own arguments: where the command starts, and the files and scripts they name."""

    index: int
    scripts: list[str]
    writes: list[tuple[int, str]]
    reads: list[tuple[int, str]]
    chdir: bool = False


def _long_name(given: str, spec: WrapperSpec) -> str:
    """``given`` resolved by getopt_long's prefix rule against the long names the spec knows."""
    known = {n for n in (*spec.value_opts, *spec.script_opts, *spec.flags) if n.startswith("--")}
    if given in known or not spec.abbreviations:
        return given
    hits = [n for n in known if n.startswith(given)]
    return hits[0] if len(hits) == 1 else given


def skip_wrapper(args: Sequence[str], spec: WrapperSpec) -> WrapperArgs:
    """Where the wrapped command starts in ``args`` (after the wrapper name), and what else runs."""
    i = 0
    out = WrapperArgs(0, [], [], [])
    positionals = spec.positionals

    def note(name: str, index: int, value: str) -> None:
        if name in spec.script_opts:
            out.scripts.append(value)
        if name in spec.write_opts:
            out.writes.append((index, value))
        if name in spec.read_opts:
            out.reads.append((index, value))
        if name in spec.chdir_opts:
            out.chdir = True

    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("-") and len(a) > 1:
            name, eq, val = a.partition("=")
            if name.startswith("--"):
                name = _long_name(name, spec)
            if name in spec.positional_unless or name[:2] in spec.positional_unless:
                positionals = 0
            takes = name in spec.value_opts or name in spec.script_opts
            if takes and eq:
                note(name, i, val)
            elif takes and i + 1 < len(args):
                note(name, i + 1, args[i + 1])
                i += 1
            elif not name.startswith("--") and len(a) > 2:
                # A cluster (-ao FILE) or an attached value (-n5, -oFILE): the first letter that
                # takes a value takes the rest of the word, or the next word.
                for k in range(1, len(a)):
                    opt = "-" + a[k]
                    if opt in spec.value_opts or opt in spec.script_opts:
                        if k + 1 < len(a):
                            note(opt, i, a[k + 1:])
                        elif i + 1 < len(args):
                            note(opt, i + 1, args[i + 1])
                            i += 1
                        break
            i += 1
            continue
        if "=" in a and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", a):
            i += 1  # sudo/env style NAME=value
            continue
        if positionals > 0:
            if spec.writes_positional:
                out.writes.append((i, a))
            positionals -= 1
            i += 1
            continue
        break
    out.index = i
    return out


# -- read-only validators -----------------------------------------------------------------

Validator = Callable[[list[str]], bool]


def _always(_args: list[str]) -> bool:
    return True


def _names_variables(args: list[str]) -> bool:
    """``printenv NAME``: read-only; a bare ``printenv`` prints the whole environment, secrets included."""
    return any(not a.startswith("-") for a in args)


def _no_args(args: list[str]) -> bool:
    return not args


def _by_effects(name: str) -> Validator:
    """Read-only when the command's family reports no write, program, hidden names or side effect."""

    def check(args: list[str]) -> bool:
        e = effects(name, args)
        return e is not None and not e.writes and e.side_effect is None and e.runs_program is None \
            and e.names_from is None

    return check


def git_is_read_only(args: list[str]) -> bool:
    """Read-only by the subcommand and its options; ``-C`` directories are the caller's to check."""
    call = git_call(args)
    if call.danger is not None or call.sub >= len(args):
        return False
    sub, rest = args[call.sub], args[call.sub + 1:]
    return git_option_danger(rest) is None and git_side_effect(sub, rest) is None


_EFFECT_CHECKED = (
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "wc", "diff", "cmp", "stat", "du", "nl", "cut", "rev",
    "tac", "fold", "column", "comm", "paste", "strings", "od", "hexdump", "md5sum", "sha1sum", "sha256sum",
    "sha512sum", "cksum", "expand", "unexpand", "jq", "date", "file", "tree", "sort", "uniq", "xxd", "find", "fd",
    "fdfind", "rg", "sed", "ps", "ss", "man",
)

READ_ONLY: dict[str, Validator] = {
    "echo": _always, "printf": _always, "pwd": _always, "which": _always, "df": _always, "cd": _always,
    "lsof": _always, "pgrep": _always, "tput": _always, "true": _always, "false": _always, "whoami": _always,
    "id": _always, "uname": _always, "basename": _always, "dirname": _always, "realpath": _always,
    "readlink": _always, "tr": _always, "seq": _always, "test": _always, "[": _always, "sleep": _always,
    "nproc": _always, "uptime": _always, "free": _always, "type": _always, "groups": _always,
    "printenv": _names_variables, "hostname": _no_args, "git": git_is_read_only,
    "command": lambda args: bool(args) and args[0] in ("-v", "-V"),
    **{name: _by_effects(name) for name in _EFFECT_CHECKED},
}

#: Read-only commands that list names without reading file contents.
NAME_LISTERS = frozenset({"ls", "find", "fd", "fdfind", "du", "tree", "stat", "realpath", "readlink"})

#: Read-only commands where an unquoted glob could expand into a dangerous flag.
GLOB_SENSITIVE = frozenset({"find", "sort", "sed", "git", "rg", "fd", "fdfind", "tree", "file", "xxd", "date",
                            "jq", "diff", "uniq"})

#: Commands whose arguments are not file names (never checked as file reads).
NON_FILE_COMMANDS = frozenset({
    "echo", "printf", "true", "false", "pwd", "whoami", "id", "uname", "basename", "dirname", "seq", "sleep",
    "test", "[", "ps", "pgrep", "tput", "ss", "lsof", "which", "type", "hostname", "date", "nproc", "uptime",
    "free", "printenv", "groups", "tr", "env", "cd", "pushd", "popd", "export", "unset", "declare", "local",
    "readonly", "typeset", "kill", "pkill", "git", "realpath", "readlink", "command",
})

#: Commands that write the files named by all their operands (after their options).
WRITE_ALL = frozenset({"touch", "mkdir", "rm", "rmdir", "tee", "truncate", "shred", "unlink"})
#: Commands whose last operand (or ``-t DIR``) is written and the others read.
COPY_LIKE = frozenset({"cp", "mv", "ln", "install", "rsync", "scp"})
#: Commands whose first operand is a mode/owner and the rest are written (metadata).
CHMOD_LIKE = frozenset({"chmod", "chown", "chgrp"})
#: Filesystem commands acceptEdits approves inside the working directories.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})

#: grep-like commands: the first operand is the pattern unless one is given by option.
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "fd", "fdfind", "jq", "awk", "gawk"})
_PATTERN_OPTS = ("-e", "-f", "--regexp", "--file")
_VALUE_OPTS: dict[str, frozenset[str]] = {
    "grep": frozenset([
        "-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count",
        "--after-context", "--before-context", "--context", "--directories", "--devices", "--include",
        "--exclude", "--exclude-dir", "--exclude-from", "--label", "--binary-files",
    ]),
    "rg": frozenset([
        "-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-E", "--regexp", "--file",
        "--glob", "--iglob", "--type", "--type-not", "--max-count", "--after-context", "--before-context",
        "--context", "--max-columns", "--threads", "--encoding", "--type-add", "--ignore-file",
        "--max-depth", "--sort", "--sortr", "--color", "--colors", "--path-separator",
    ]),
    "head": frozenset(["-n", "-c", "--lines", "--bytes"]),
    "tail": frozenset(["-n", "-c", "--lines", "--bytes", "--pid", "-s", "--sleep-interval"]),
    "cut": frozenset(["-d", "-f", "-b", "-c", "--delimiter", "--fields", "--bytes", "--characters"]),
    "sort": frozenset(["-k", "-t", "-S", "--key", "--field-separator", "--buffer-size"]),
    "du": frozenset(["-d", "--max-depth", "-B", "--block-size", "-t", "--threshold", "--exclude"]),
    "ls": frozenset(["-I", "--ignore", "-w", "--width", "--hide", "--format", "--sort", "--time-style"]),
    "tree": frozenset(["-L", "-P", "-I", "--filelimit"]),
    "wc": frozenset(),
    "awk": frozenset(["-F", "-v", "-f", "--field-separator", "--assign", "--file"]),
    "jq": frozenset(["--arg", "--argjson", "--indent", "--tab"]),
    "diff": frozenset(["-U", "-C", "--unified", "--context", "--label", "-x", "--exclude"]),
    "xargs": frozenset(["-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"]),
}
_VALUE_OPTS["egrep"] = _VALUE_OPTS["fgrep"] = _VALUE_OPTS["grep"]
_VALUE_OPTS["gawk"] = _VALUE_OPTS["awk"]

#: Reading commands whose recursive mode walks whole directories.
#: (``find``, ``ls -R`` and other name listers only list names, they are not here.)
RECURSIVE_READERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "cp", "tar", "zip", "rsync", "scp"})


def is_recursive(name: str, args: list[str]) -> bool:
    if name in ("rg", "ag", "ack", "tar", "zip"):
        return True
    for a in args:
        if a in ("-r", "-R", "--recursive", "-a", "--archive", "--dereference-recursive"):
            return True
        if _SHORT_FLAG.match(a) and not a.startswith("--") and ("r" in a[1:] or "R" in a[1:]):
            return name not in ("ls", "du", "tree") or "R" in a[1:]
    return False


#: Commands whose operands are not all plain files even without options.
_NOT_PLAIN = PATTERN_FIRST | RECURSIVE_READERS | {"find"}


def generic_effects(name: str, args: Sequence[str]) -> Effects:
    """Effects of a command without a family table: its operands are files it reads."""
    return _generic_effects(name, args if isinstance(args, tuple) else tuple(args))


@lru_cache(maxsize=4096)
def _generic_effects(name: str, argv: tuple[str, ...]) -> Effects:
    args = list(argv)
    if name not in _NOT_PLAIN and not any(a[:1] == "-" for a in args):
        return Effects(reads=list(enumerate(args)))  # operands only
    ops, _values = operands(name, args)
    refs: list[tuple[int, str]] = []
    used: set[int] = set()
    for v in ops:
        for i, a in enumerate(args):
            if a == v and i not in used:
                used.add(i)
                refs.append((i, v))
                break
    eff = Effects(reads=refs)
    if name in RECURSIVE_READERS and is_recursive(name, args):
        eff.trees = list(refs) or ([(-1, ".")] if name in ("ag", "ack") else [])
    return eff


def operands(name: str, args: list[str]) -> tuple[list[str], list[str]]:
    """(operands, option values that name files) of a command line, best effort.

    Option values that may be files (``--file=x``, ``-f x``) are returned separately so
    Read deny rules can still see them. The pattern of grep-like commands is dropped.
    """
    value_opts = _VALUE_OPTS.get(name, frozenset())
    ops: list[str] = []
    opt_values: list[str] = []
    pattern_given = False
    i = 0
    end_of_opts = False
    while i < len(args):
        a = args[i]
        if not end_of_opts and a == "--":
            end_of_opts = True
        elif not end_of_opts and a.startswith("-") and len(a) > 1 and name != "find":
            opt, eq, val = a.partition("=")
            if opt in _PATTERN_OPTS or (opt.startswith("-") and not opt.startswith("--") and opt[-1:] in "ef"
                                         and name in PATTERN_FIRST and len(opt) == 2):
                pattern_given = True
            if eq:
                opt_values.append(val)
            elif opt in value_opts and i + 1 < len(args):
                if opt in ("-f", "--file", "--exclude-from", "--ignore-file", "-a"):
                    opt_values.append(args[i + 1])
                i += 1
        else:
            ops.append(a)
        i += 1
    if name in PATTERN_FIRST and not pattern_given and ops:
        if name in ("jq",) and ("-n" in args or "--null-input" in args):
            pass
        ops = ops[1:]
    if name == "find":
        paths = []
        for a in args:
            if a.startswith(("-", "(", "!", ")")):
                break
            paths.append(a)
        return paths, []
    return ops, opt_values
