"""Knowledge about shell commands: wrappers, the read-only set, file operands, known traps.

Kept apart from the matching logic because it is data plus small validators: which
wrappers are stripped before matching (and how many of their arguments go with them),
which commands run without a prompt and under what conditions, which arguments of a
command are files it reads or writes. Every validator answers "not read-only" when unsure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def _ws(value_opts: str = "", positionals: int = 0, script_opts: str = "", joins: bool = False) -> WrapperSpec:
    return WrapperSpec(frozenset(value_opts.split()), positionals, frozenset(script_opts.split()), joins)


#: Process wrappers stripped before allow matching (a fixed list, not configurable).
ALLOW_STRIP_WRAPPERS: dict[str, WrapperSpec] = {
    "timeout": _ws("-s --signal -k --kill-after", positionals=1),
    "time": _ws("-f --format -o --output"),
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
    "sudo": _ws("-u -g -h -C -D -p -r -t -T -U --user --group --host --chdir --prompt --role --type "
                "--command-timeout --other-user --close-from"),
    "doas": _ws("-u -C"),
    "run0": _ws("-u -g -D --user --group --chdir --setenv --property --description --unit"),
    "env": _ws("-u -C --unset --chdir", script_opts="-S --split-string"),
    "watch": _ws("-n --interval -d --differences -q --equexit --chgexit", joins=True),
    "ionice": _ws("-c -n -p -P -u --class --classdata --pid --pgid --uid"),
    "setsid": _ws(),
    "flock": _ws("-E -w --conflict-exit-code --timeout", positionals=1, script_opts="-c --command"),
    "chroot": _ws("--userspec --groups", positionals=1),
    "nsenter": _ws("-t -S -G --target --setuid --setgid -m -u -i -n -p -C -U -T -r -w"),
    "unshare": _ws("--propagation --setgroups --map-user --map-group"),
    "runuser": _ws("-u -g -G --user --group --supp-group", script_opts="-c --command"),
    "su": _ws("-g -G -s --group --supp-group --shell", positionals=1, script_opts="-c --command"),
    "xargs": _ws("-n -I -i -L -l -P -d -E -e -s -a --max-args --replace --max-lines --max-procs "
                 "--delimiter --eof --max-chars --arg-file --process-slot-var"),
    "caffeinate": _ws("-t -w"),
    "unbuffer": _ws(),
    "torsocks": _ws(),
    "proxychains": _ws("-f"),
    "proxychains4": _ws("-f"),
    "firejail": _ws(),
    "strace": _ws("-e -o -p -s -u -E -I -a -b -O -P -S -X"),
    "ltrace": _ws("-e -o -p -s -u -a -n"),
    "nocorrect": _ws(),
    "coproc": _ws(),
    "parallel": _ws("-j -S --jobs --sshlogin -N --max-args", joins=True),
    "ssh": _ws("-p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w -B", positionals=1, joins=True),
    "script": _ws("-O -I -T -E --log-out --log-in --log-timing --echo", script_opts="-c --command"),
    "systemd-run": _ws("-u -p -E --unit --property --setenv --description --slice --uid --gid"),
    "valgrind": _ws(),
    "gdb": _ws(),
    "dotenv": _ws("-e -f"),
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


def skip_wrapper(args: Sequence[str], spec: WrapperSpec) -> tuple[int, list[str]]:
    """Index of the wrapped command in ``args`` (after the wrapper name) and any -c scripts."""
    i = 0
    scripts: list[str] = []
    positionals = spec.positionals
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("-") and len(a) > 1:
            name, eq, _val = a.partition("=")
            if name in spec.script_opts:
                if eq:
                    scripts.append(_val)
                elif i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 1
            elif name in spec.value_opts and not eq:
                i += 1
            elif not name.startswith("--") and len(name) > 2 and name[:2] in spec.value_opts:
                pass  # attached value: -n5
            i += 1
            continue
        if "=" in a and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", a):
            i += 1  # sudo/env style NAME=value
            continue
        if positionals > 0:
            positionals -= 1
            i += 1
            continue
        break
    return i, scripts


# -- read-only validators -----------------------------------------------------------------

Validator = Callable[[list[str]], bool]


def _no_flags(*bad: str, prefixes: Sequence[str] = ()) -> Validator:
    bad_set = frozenset(bad)

    def check(args: list[str]) -> bool:
        for a in args:
            if a == "--":
                break
            name = a.split("=", 1)[0]
            if name in bad_set or any(a.startswith(p) for p in prefixes):
                return False
            if _SHORT_FLAG.match(a) and not a.startswith("--"):
                letters = set(a[1:])
                if any(f"-{c}" in bad_set for c in letters if c.isalpha()):
                    return False
        return True

    return check


def _all(*checks: Validator) -> Validator:
    def check(args: list[str]) -> bool:
        return all(c(args) for c in checks)

    return check


def _always(_args: list[str]) -> bool:
    return True


def _no_args(args: list[str]) -> bool:
    return not args


def _max_operands(n: int) -> Validator:
    def check(args: list[str]) -> bool:
        return len([a for a in args if not a.startswith("-")]) <= n

    return check


_FIND_BAD = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                       "-fls"})


def find_is_safe(args: list[str]) -> bool:
    return not any(a in _FIND_BAD for a in args)


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


def sed_parts(args: list[str]) -> tuple[list[str], list[str], bool, bool]:
    """(scripts, file operands, in_place, uses_script_file) of a sed command line."""
    scripts: list[str] = []
    files: list[str] = []
    in_place = False
    script_file = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif a in ("-f", "--file") or a.startswith("--file="):
            script_file = True
            if "=" not in a:
                i += 1
        elif a.startswith("--in-place") or a == "-i" or (a.startswith("-i") and not a.startswith("--")):
            in_place = True
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1:
            letters = a[1:]
            if "i" in letters:
                in_place = True
            if "e" in letters or "f" in letters:
                if letters.endswith(("e", "f")) and i + 1 < len(args):
                    (scripts if letters.endswith("e") else files).append(args[i + 1])
                    script_file = script_file or letters.endswith("f")
                    i += 1
                else:
                    return scripts, files, in_place, True
        elif a.startswith("--"):
            pass
        else:
            files.append(a)
        i += 1
    if not scripts and files and not script_file:
        scripts.append(files.pop(0))
    return scripts, files, in_place, script_file


def sed_is_read_only(args: list[str]) -> bool:
    scripts, _files, in_place, script_file = sed_parts(args)
    if in_place or script_file or not scripts:
        return False
    return all(sed_script_is_safe(s) for s in scripts)


def git_subcommand(args: list[str]) -> tuple[int, bool]:
    """Index of git's subcommand in ``args`` and whether a global option is dangerous."""
    i = 0
    dangerous = False
    while i < len(args):
        a = args[i]
        if a in ("-c", "--config-env") or a.startswith(("--config-env=", "--exec-path", "-c")):
            dangerous = True
            i += 2 if a in ("-c", "--config-env") else 1
            continue
        if a in ("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        break
    return i, dangerous


_GIT_READ_ONLY = frozenset({
    "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
    "shortlog", "grep", "rev-list", "merge-base", "name-rev", "whatchanged", "annotate", "count-objects",
    "cherry", "show-ref", "for-each-ref", "help", "version", "var", "check-ignore", "diff-tree",
    "diff-files", "diff-index", "range-diff", "show-branch",
})
_GIT_BAD_FLAGS = ("--output", "-O", "--open-files-in-pager", "--ext-diff", "--exec")


def git_is_read_only(args: list[str]) -> bool:
    idx, dangerous = git_subcommand(args)
    if dangerous or idx >= len(args):
        return False
    if any(a != "-C" and a.startswith("-C") for a in args[:idx]) or "-C" in args[:idx]:
        return False  # another directory: its config and hooks are not ours to trust
    sub, rest = args[idx], args[idx + 1:]
    if any(a.startswith(_GIT_BAD_FLAGS) for a in rest):
        return False
    if sub in _GIT_READ_ONLY:
        return True
    if sub == "branch":
        ok = {"-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes", "--show-current",
              "--contains", "--merged", "--no-merged", "--sort", "--format", "--no-color", "--color",
              "--points-at"}
        return all(a.split("=", 1)[0] in ok for a in rest if a.startswith("-")) and (
            not [a for a in rest if not a.startswith("-")] or "--list" in rest or "-l" in rest
            or any(a.startswith(("--contains", "--merged", "--no-merged", "--points-at")) for a in rest)
        )
    if sub == "tag":
        return not rest or rest[0] in ("-l", "--list") or all(a.startswith("-n") for a in rest)
    if sub == "remote":
        return not rest or rest in (["-v"], ["--verbose"]) or (rest[0] in ("show", "get-url") and True)
    if sub == "stash":
        return bool(rest) and rest[0] in ("list", "show")
    if sub == "worktree":
        return bool(rest) and rest[0] == "list"
    if sub == "config":
        return bool(rest) and all(
            a in ("--get", "--get-all", "--list", "-l", "--get-regexp", "--show-origin", "--global",
                  "--local", "--system", "--name-only", "--null", "-z") or not a.startswith("-")
            for a in rest
        ) and any(a in ("--get", "--get-all", "--list", "-l", "--get-regexp") for a in rest)
    if sub == "reflog":
        return not rest or rest[0] == "show" or rest[0].startswith("-")
    return False


READ_ONLY: dict[str, Validator] = {
    "ls": _always, "cat": _always, "echo": _always, "printf": _always, "pwd": _always, "head": _always,
    "tail": _always, "grep": _always, "egrep": _always, "fgrep": _always, "wc": _always,
    "which": _always, "diff": _no_flags("--output"), "cmp": _always, "stat": _always, "du": _always,
    "df": _always, "cd": _always, "lsof": _always, "pgrep": _always, "tput": _always, "ss": _always,
    "true": _always, "false": _always, "whoami": _always, "id": _always, "uname": _always,
    "basename": _always, "dirname": _always, "realpath": _always, "readlink": _always, "nl": _always,
    "cut": _always, "tr": _always, "rev": _always, "tac": _always, "fold": _always, "column": _always,
    "comm": _always, "paste": _always, "strings": _always, "od": _always, "hexdump": _always,
    "md5sum": _always, "sha1sum": _always, "sha256sum": _always, "sha512sum": _always, "cksum": _always,
    "seq": _always, "test": _always, "[": _always, "sleep": _always, "ps": _always, "nproc": _always,
    "uptime": _always, "free": _always, "type": _always, "printenv": _always, "groups": _always,
    "expand": _always, "unexpand": _always, "jq": _no_flags("--rawfile", "--slurpfile", "-L"),
    "hostname": _no_args, "env": _no_args, "date": _no_flags("-s", "--set"),
    "file": _no_flags("-m", "--magic-file", "-f", "--files-from", "-C", "--compile"),
    "tree": _no_flags("-o", "--fromfile", "-R"),
    "sort": _no_flags("-o", "--output", "--compress-program", "-T", "--temporary-directory"),
    "uniq": _max_operands(1), "xxd": _all(_no_flags("-r", "-revert"), _max_operands(1)),
    "find": find_is_safe, "fd": _no_flags("-x", "--exec", "-X", "--exec-batch"),
    "fdfind": _no_flags("-x", "--exec", "-X", "--exec-batch"),
    "rg": _no_flags("--pre", "--pre-glob", "--hostname-bin", "-z", "--search-zip"),
    "sed": sed_is_read_only, "git": git_is_read_only,
    "command": lambda args: bool(args) and args[0] in ("-v", "-V"),
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
