"""Adversarial cases for the Bash bypass classes: option abbreviations, wrappers, subscript
evaluation, git global options, read-only commands with side effects, hidden file reads,
and the over-strict results (trees on disk, version queries, deny rather than ask)."""

from __future__ import annotations

import getopt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard_permissions_shell import effects as E
from pegboard_permissions_shell.options import NONE, REQUIRED, grammar, parse_args, resolve_long
from tests.permissions.support import bash, engine

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PLAIN = engine()
RM = engine(deny=["Bash(rm *)"], allow=["Bash(echo *)", "Bash(ls *)"])


def _why(e: object, command: str) -> str:
    return e.check("Bash", {"command": command}).reason  # type: ignore[attr-defined]


# -- class 3: abbreviated GNU long options ------------------------------------------------

@pytest.mark.parametrize("command", [
    "sort --o=out.txt x", "sort --ou out.txt x", "sort --output=out.txt x", "sort -oout.txt x", "sort x -o out",
    "sort --compress-prog=sh x", "sort --files0=list", "sort --temp=/tmp x",
    "sed --i s/a/b/ f", "sed --in s/a/b/ f", "sed --in-pl=.bak s/a/b/ f", "sed -ni p f",
    "sed --expr='1e id' f", "sed --ex='w out' f", "sed --fi=s.sed f", "sed -f s.sed f",
    "date --se=2020-01-01", "date --s 2020-01-01", "date -s2020",
    "ss --ki", "ss --kil", "ss --dia=out", "tree -o out", "file --comp x", "wc --files0=list",
    "sha256sum --ch sums", "du --files0-from=list",
])
def test_abbreviated_dangerous_options_are_not_read_only(command: str) -> None:
    assert bash(PLAIN, command) == "ask", (command, _why(PLAIN, command))


#: (command template, option, the long option's full name in the grammar it belongs to)
DANGEROUS_LONG = [
    ("sort {opt}=out.txt in", "output", E._SORT),
    ("sort {opt}=gzip in", "compress-program", E._SORT),
    ("sed {opt} s/a/b/ f", "in-place", E._SED),
    ("sed {opt}=s.sed f", "file", E._SED),
    ("date {opt}=2020-01-01", "set", E._DATE),
    ("date {opt}=.env", "file", E._DATE),
    ("ss {opt}", "kill", E._SS),
]


@SETTINGS
@given(st.sampled_from(DANGEROUS_LONG), st.data())
def test_every_unique_prefix_of_a_dangerous_option_counts(case: tuple[str, str, object], data: st.DataObject) -> None:
    template, name, g = case
    shortest = next(k for k in range(1, len(name) + 1) if resolve_long(g, name[:k]) == name)  # type: ignore[arg-type]
    k = data.draw(st.integers(min_value=shortest, max_value=len(name)))
    command = template.format(opt="--" + name[:k])
    e = engine(deny=["Read(.env)"])
    assert bash(e, command) != "allow", (command, _why(e, command))


SHORT = "ab:c:x"
LONGS = ["alpha", "beta=", "bravo=", "count=", "color", "colour"]
ARG = st.sampled_from(["-a", "-b", "-bv", "-c", "-ac", "-abv", "-x", "--alpha", "--al", "--be", "--beta", "--bet=v",
                       "--br=v", "--cou", "--coun=5", "--colo", "--colou", "op", "-", "--", "f.txt", "v"])


@SETTINGS
@given(st.lists(ARG, max_size=6))
def test_option_parser_agrees_with_gnu_getopt(argv: list[str]) -> None:
    g = grammar(short="b= c=", long=" ".join(LONGS))
    try:
        opts, rest = getopt.gnu_getopt(argv, SHORT, LONGS)
    except getopt.GetoptError:
        return  # an error in getopt (ambiguous, missing value): the program would refuse to run
    got = parse_args(g, argv)
    assert not got.unknown
    expected = [(o.lstrip("-") if o.startswith("--") else o, v or None) for o, v in opts]
    ours = [(o.name, o.value) for o in got.options]
    assert ours == expected, (argv, opts)
    assert got.operand_values() == rest


def test_grammar_prefix_rule() -> None:
    g = grammar(long="output= one-file-system verbose")
    assert resolve_long(g, "ou") == "output"
    assert resolve_long(g, "o") is None  # ambiguous
    assert resolve_long(grammar(long="output=", abbreviations=False), "ou") is None
    assert g.long["output"] == REQUIRED and g.long["verbose"] == NONE


# -- class 4: wrappers that write files or run commands ----------------------------------

@pytest.mark.parametrize(("command", "expect"), [
    ("\\time -o out.txt ls", "ask"),
    ("command time -o out.txt ls", "ask"),
    ("time --out=out.txt ls", "ask"),
    ("time -o .env ls", "deny"),
    ("time --ou .env ls", "deny"),
    ("strace -o .env ls", "deny"),
    ("script -q -c ls .env", "deny"),
    ("script -c 'rm -rf x' log.txt", "deny"),
    ("xargs -a .env cat", "deny"),
    ("xargs --arg-file=.env cat", "deny"),
    ("timeout --sig KILL 5 rm x", "deny"),
    ("timeout --k 1 5 rm x", "deny"),
    ("taskset -c 0 rm -rf x", "deny"),
    ("taskset 0x3 rm -rf x", "deny"),
    ("chrt 5 rm x", "deny"),
    ("numactl --physcpubind=0 rm x", "deny"),
    ("time -ao .env ls", "deny"),
    ("time -a -o.env ls", "deny"),
    ("timeout -sKILL 5 rm x", "deny"),
    ("timeout -s 9 -k1 5 rm x", "deny"),
    ("nice -n5 rm x", "deny"),
    ("stdbuf -oL rm x", "deny"),
    ("xargs -0n1 rm", "deny"),
    ("time ls", "allow"),
    ("time -p ls", "allow"),
])
def test_wrapper_options_are_seen(command: str, expect: str) -> None:
    e = engine(deny=["Bash(rm *)", "Read(.env)", "Edit(.env)"], allow=["Bash(ls *)", "Bash(cat *)"])
    assert bash(e, command) == expect, (command, _why(e, command))


# -- class 5: arithmetic and subscript evaluation ----------------------------------------

@pytest.mark.parametrize("command", [
    "test -v 'a[$(rm -rf x)]'",
    "[ -v 'a[$(rm -rf x)]' ]",
    "[[ -v 'a[$(rm -rf x)]' ]]",
    "printf -v 'a[$(rm -rf x)]' %s y",
    "read 'a[$(rm -rf x)]' <<< y",
    "read -r -a 'a[`rm -rf x`]' <<< y",
    "let 'a[$(rm -rf x)]=1'",
    "(( 'a[$(rm -rf x)]' ))",
    "echo $(( 'a[$(rm -rf x)]' ))",
    "[[ 'a[$(rm -rf x)]' -eq 1 ]]",
    "x='a[$(rm -rf x)]'; (( x ))",
    "x='a[$(rm -rf x)]'; echo ${!x}",
    "x='a[$(rm -rf x)]'; echo ${y:x}",
    "x='a[$(rm -rf x)]'; [[ $x -eq 1 ]]",
    "declare -i i; i='a[$(rm -rf x)]'",
    "mapfile -C 'rm -rf x' -c 1 arr < /dev/null",
    "trap 'rm -rf x' EXIT",
])
def test_substitutions_bash_evaluates_are_judged(command: str) -> None:
    assert bash(RM, command) == "deny", (command, _why(RM, command))


@pytest.mark.parametrize(("command", "expect"), [
    ("test -v 'a[$(id)]'", "ask"),
    ("printf -v 'a[$(id)]' x", "ask"),
    ("test -v 'a[$i]'", "ask"),
    ("test -v a", "allow"),
    ("test -v 'a[1]'", "allow"),
    ("printf -v x %s y", "allow"),
    ("printf '%s' 'a[$(id)]'", "allow"),  # printf %s does not evaluate its argument
    ("echo 'a[$(id)]'", "allow"),
])
def test_subscript_evaluation_is_never_read_only(command: str, expect: str) -> None:
    assert bash(PLAIN, command) == expect, (command, _why(PLAIN, command))


# -- class 6: git global options ----------------------------------------------------------

@pytest.mark.parametrize(("command", "expect"), [
    ("git status", "allow"),
    ("git -c core.fsmonitor=x status", "ask"),
    ("git -ccore.fsmonitor=x status", "ask"),
    ("git -c core.fsmonitor='rm -rf x' status", "deny"),
    ("git -c alias.st='!rm -rf x' st", "deny"),
    ("git -c core.pager='rm -rf x' log", "deny"),
    ("git --config-env=core.fsmonitor=X status", "ask"),
    ("git --git-dir=/tmp/x/.git status", "ask"),
    ("git --git-dir /tmp/x/.git status", "ask"),
    ("git --work-tree=/ status", "ask"),
    ("git --exec-path=/tmp status", "ask"),
    ("git -C src status", "allow"),
    ("git -Csrc status", "allow"),
    ("git -C /tmp status", "ask"),
    ("git -C .. status", "ask"),
    ("git --no-pager status", "allow"),
    ("git log --outp=x", "ask"),
    ("git log --output=x", "ask"),
    ("git diff --ext", "ask"),
    ("git grep -Ocat x", "ask"),
    ("git log --output-indicator-new=+", "allow"),
])
def test_git_global_options(command: str, expect: str) -> None:
    e = engine(deny=["Bash(rm *)"], allow=["Bash(git status)"])
    assert bash(e, command) == expect, (command, _why(e, command))


def test_an_exact_git_rule_does_not_match_past_dangerous_global_options() -> None:
    e = engine(allow=["Bash(git status)", "Bash(git log *)"])
    assert bash(e, "git -c core.fsmonitor=x status") == "ask"
    assert bash(e, "git --git-dir=x log") == "ask"
    assert bash(e, "git -C src log -1") == "allow"
    assert bash(e, "git -C /elsewhere log -1") == "ask"


# -- class 7: "read-only" commands with side effects -------------------------------------

@pytest.mark.parametrize("command", [
    "date 01010000", "date 0101000026", "date -s 2020-01-01", "date --set=2020-01-01",
    "ps e", "ps auxe", "ps eww", "git remote show origin", "git remote add x y", "git help -w log",
    "git help --web log", "git help --w log", "ss -K", "ss --kill", "ss -D out", "tree -o out", "tree -R",
    "xxd -r a", "xxd a b", "uniq a b", "jq -L lib . f", "man -P cat ls", "man --pager=cat ls", "man -H ls",
    "find . -delete", "find . -fprint out", "git branch -D x", "git tag v1", "git config x y",
])
def test_side_effects_are_not_read_only(command: str) -> None:
    assert bash(PLAIN, command) == "ask", (command, _why(PLAIN, command))


@pytest.mark.parametrize("command", [
    "date", "date +%s", "date -u +%F", "date -d tomorrow", "ps aux", "ps -ef", "git remote -v",
    "git remote show -n origin", "git remote get-url origin", "git help log", "ss -tlnp", "tree -L 2",
    "sort -k2 x", "sed -n 1p f", "uniq x", "printenv HOME", "man ls", "man 5 crontab", "man -k printf", "node -v",
    "python3 --version", "python -V", "go version",
])
def test_plain_reads_stay_read_only(command: str) -> None:
    assert bash(PLAIN, command) == "allow", (command, _why(PLAIN, command))


def test_env_with_a_command_is_still_a_wrapper() -> None:
    assert bash(RM, "env rm x") == "deny"
    assert bash(PLAIN, "env FOO=1 ls") == "ask"
    assert bash(PLAIN, "env -C /tmp") == "ask"


# -- class 8: file reads the engine did not see -------------------------------------------

@pytest.mark.parametrize(("command", "expect"), [
    ("date -f .env", "deny"),
    ("date --file=.env", "deny"),
    ("date -r .env", "deny"),
    ("grep -f .env x", "deny"),
    ("grep --fil=.env x", "deny"),
    ("sort --random-source=.env x", "deny"),
    ("hexdump -f .env x", "deny"),
    ("jq --rawfile v .env .", "deny"),
    ("ss -F .env", "deny"),
    ("sort --files0-from=list", "ask"),
    ("wc --files0-from=list", "ask"),
    ("sha256sum -c sums", "ask"),
    ("echo .env | xargs cat", "ask"),
    ("cat list | xargs cat", "ask"),
    ("xargs cat < list", "ask"),
    ("git blame --contents .env x", "deny"),
    ("git blame --contents=.env x", "deny"),
])
def test_hidden_reads_are_checked(command: str, expect: str) -> None:
    e = engine(deny=["Read(.env)"], allow=["Bash(cat *)", "Bash(echo *)"])
    d = e.check("Bash", {"command": command})
    assert d.decision == expect, (command, d.reason)


def _tree(root: Path, files: list[str]) -> None:
    for f in files:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x", "utf-8")


@pytest.mark.parametrize("command", [
    "grep -d recurse foo .", "grep --directories=recurse foo .", "grep -d rec foo .", "grep -r foo .",
    "grep -R foo .", "rg foo", "diff -r . other", "git grep TODO", "find . | xargs cat",
    "find . -name '*.py' | xargs grep foo",
])
def test_recursion_into_a_tree_with_a_denied_file_asks(tmp_path: Path, command: str) -> None:
    _tree(tmp_path, ["src/a.py", "conf/.env", "other/b.txt"])
    e = engine(deny=["Read(./.env)"], cwd=tmp_path)
    assert bash(e, command) == "ask", (command, _why(e, command))


@pytest.mark.parametrize("command", [
    "rg foo src", "grep -rn TODO src", "grep -d recurse TODO src", "wc -l src/*.py", "find src | xargs wc -l",
    "find src -name '*.py' | xargs grep foo", "diff -r src src2", "cat src/*.py", "ls -R src",
])
def test_recursion_that_cannot_reach_a_denied_file_is_read_only(tmp_path: Path, command: str) -> None:
    _tree(tmp_path, ["src/a.py", "src/pkg/b.py", "src2/a.py", ".env"])
    e = engine(deny=["Read(./.env)"], cwd=tmp_path)
    assert bash(e, command) == "allow", (command, _why(e, command))


def test_a_glob_that_matches_a_denied_file_denies(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/a.py", "src/.env"])
    e = engine(deny=["Read(./.env)"], cwd=tmp_path)
    assert bash(e, "cat src/.e*") == "deny"
    assert bash(e, "wc -l src/*.py") == "allow"


def test_grep_R_follows_a_link_out_of_the_project(tmp_path: Path) -> None:
    project, secret = tmp_path / "proj", tmp_path / "secret"
    _tree(project, ["src/a.py"])
    _tree(secret, ["id_rsa"])
    (project / "src" / "keys").symlink_to(secret)
    e = engine(deny=[f"Read(/{secret}/**)"], cwd=project)
    assert bash(e, "grep -R key src") == "ask"
    assert bash(e, "rg -L key src") == "ask"
    assert bash(e, "grep -r key src") == "allow"  # -r does not follow links inside the tree
    plain = engine(cwd=project)
    assert bash(plain, "grep -R key src") == "ask"  # reads outside the working directories
    assert bash(plain, "grep -r key src") == "allow"


def test_names_listed_through_links_are_followed(tmp_path: Path) -> None:
    project, secret = tmp_path / "proj", tmp_path / "secret"
    _tree(project, ["src/a.py"])
    _tree(secret, ["id_rsa"])
    (project / "src" / "keys").symlink_to(secret)
    e = engine(deny=[f"Read(/{secret}/**)"], cwd=project)
    assert bash(e, "find src | xargs cat") == "allow"  # find without -L does not descend into the link
    assert bash(e, "find -L src | xargs cat") == "ask"
    assert bash(e, "grep -rl key src | xargs cat") == "allow"
    assert bash(e, "grep -Rl key src | xargs cat") == "ask"
    (project / "src" / "k").symlink_to(secret / "id_rsa")
    assert bash(e, "find src | xargs cat") == "ask"  # cat opens the listed link to the file
    assert bash(e, "grep -r key src") == "allow"  # grep -r skips links found while walking


def test_a_line_that_writes_files_does_not_trust_the_tree_on_disk(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/a.py"])
    e = engine(deny=["Read(./.env)"], cwd=tmp_path)
    assert bash(e, "grep -r x src") == "allow"
    assert bash(e, "ln -s ../.env src/x; grep -r x src") == "ask"
    assert bash(e, "git checkout other && grep -r x src") == "ask"
    assert bash(e, "git status && grep -r x src") == "allow"


# -- deny rather than ask, when the engine sees through the trick -------------------------

@pytest.mark.parametrize("command", [
    "rsync -e 'rm -rf x' a b",
    "rsync --rsh='rm -rf x' a b",
    "a=rm; v=a; ${!v} -rf x",
    "taskset -c 0 rm -rf x",
    "ssh -o ProxyCommand='rm -rf x' host",
    "ssh -oProxyCommand='rm -rf x' host",
    "ssh -o 'ProxyCommand rm -rf x' host",
    "ssh -o LocalCommand='rm -rf x' -o PermitLocalCommand=yes host",
])
def test_deny_when_the_denied_command_is_visible(command: str) -> None:
    assert bash(RM, command) == "deny", (command, _why(RM, command))


@pytest.mark.parametrize("command", ["cat x 1<>.env", "cat x <>.env", "sort -o .env x", "sort --out=.env x"])
def test_writes_through_redirects_and_options_deny(command: str) -> None:
    e = engine(deny=["Edit(.env)"])
    assert bash(e, command) == "deny", (command, _why(e, command))


def test_read_write_redirect_parses() -> None:
    assert bash(PLAIN, "cat x 1<>out") == "ask"
    assert "cannot" not in _why(PLAIN, "cat x 1<>out")


#: (wrapper, short option, long option, value, positional arguments before the command)
WRAPPER_OPTIONS = [
    ("timeout", "-s", "--signal", "KILL", "5"), ("timeout", "-k", "--kill-after", "1", "5"),
    ("nice", "-n", "--adjustment", "5", ""), ("stdbuf", "-o", "--output", "L", ""),
    ("sudo", "-u", "--user", "root", ""), ("xargs", "-n", "--max-args", "1", ""),
    ("taskset", "-c", "--cpu-list", "0", ""), ("time", "-f", "--format", "%e", ""),
    ("env", "-u", "--unset", "X", ""),
]


def _spellings(short: str, long: str, value: str) -> st.SearchStrategy[str]:
    body = long[2:]
    prefixes = st.integers(min_value=max(1, len(body) - 3), max_value=len(body)).map(lambda k: "--" + body[:k])
    return st.one_of(
        st.just(f"{short} {value}"), st.just(f"{short}{value}"),
        prefixes.map(lambda p: f"{p}={value}"), prefixes.map(lambda p: f"{p} {value}"),
    )


@SETTINGS
@given(st.sampled_from(WRAPPER_OPTIONS), st.data())
def test_wrapper_option_spellings_never_hide_the_command(case: tuple[str, str, str, str, str],
                                                         data: st.DataObject) -> None:
    wrapper, short, long, value, positional = case
    spelled = data.draw(_spellings(short, long, value))
    command = " ".join(p for p in (wrapper, spelled, positional, "rm -rf build") if p)
    assert bash(RM, command) == "deny", (command, _why(RM, command))
