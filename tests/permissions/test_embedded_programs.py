"""Commands whose arguments hold programs or shell text they run (awk, vim, less, tar's
program options), and deletions through ``find -delete``: a wildcard allow rule for the
command never approves what the program runs, and deny rules see the commands inside."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.permissions.support import bash, engine

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALLOWED = engine(allow=["Bash(awk *)", "Bash(gawk *)", "Bash(vim *)", "Bash(less *)", "Bash(tar *)",
                        "Bash(find *)"],
                 deny=["Bash(rm *)", "Bash(curl *)", "Bash(sh *)", "Edit(//etc/**)"])
#: Only the wildcard allow rules: whatever a program runs must ask.
OPEN = engine(allow=["Bash(awk *)", "Bash(vim *)", "Bash(less *)", "Bash(tar *)", "Bash(find *)"])


@pytest.mark.parametrize("command", [
    """awk 'BEGIN{system("rm -rf /")}'""",
    """awk 'BEGIN { print "x" | "sh" }'""",
    """awk 'BEGIN { "curl evil" | getline line }'""",
    """gawk --source='BEGIN{system("curl x")}'""",
    """gawk --sou='BEGIN{system("curl x")}'""",
    """awk -e 'BEGIN{system("rm -rf x")}'""",
    """awk '{print > "/etc/passwd"}' f""",
    """awk '{printf "%s", $0 >> "/etc/cron.d/x"}' f""",
    "vim -c '!rm -rf /' f",
    "vim -c ':!curl evil' f",
    "vim +'!rm x' f",
    "vim --cmd 'silent !sh -c id' f",
    "vi -c 'call system(\"rm -rf x\")' f",
    "less '+!rm -rf x' f",
    "find /etc -delete",
    "find /etc -name '*.conf' -delete",
])
def test_deny_rules_see_inside_the_program(command: str) -> None:
    assert bash(ALLOWED, command) == "deny", ALLOWED.check("Bash", {"command": command}).reason


@pytest.mark.parametrize("command", [
    """awk 'BEGIN{system("id")}'""",
    """awk '{print | "cat"}' f""",
    "awk '{print > $2}' f",
    "awk '{print $1 > 5}' f",
    "awk -f prog.awk f",
    "awk --file=prog.awk f",
    "gawk -i lib.awk 'BEGIN{}'",
    "gawk -l ext 'BEGIN{}'",
    "gawk --lo=ext 'BEGIN{}'",
    "awk '@load \"x\"; BEGIN{}'",
    "vim -c 'w /tmp/x' f",
    "vim -S session.vim f",
    "vim -s keys.txt f",
    "vim -u evil.vimrc f",
    "vim +'!id' f",
    "less '+!id' f",
    "less '+|a id' f",
    "tar --to-command=id -xf x.tar",
    "tar --to-com=id -xf x.tar",
    "tar --use-compress-prog=id -cf x src",
    "tar --checkpoint-act=exec=id -cf x src",
    "tar --info-scr=id -cf x src",
    "tar --rsh-command=id -cf host:x src",
    "tar -I id -cf x src",
    "tar -Fid -cf x src",
    "find / -delete",
    "find ~ -delete",
    "find /home -delete",
    "find . -name '*.pyc' -delete",
    "find build -delete",
    "find . -fprint out.txt",
    "find . -fls listing",
])
def test_a_wildcard_allow_rule_does_not_approve_what_the_program_runs(command: str) -> None:
    assert bash(OPEN, command) == "ask", OPEN.check("Bash", {"command": command}).reason


@pytest.mark.parametrize("command", [
    "awk '{print $1}' f",
    "awk -F: '$3 > 5 {print $1}' /proj/f",
    "awk '$1 || $2' f",
    "awk '{print}' n=1 f",
    "vim f",
    "vim +10 f",
    "vim +/pattern f",
    "less f",
    "less +G f",
    "tar -cf x.tar src",
    "tar --totals -cf x.tar src",
    "find . -name '*.pyc' -print",
])
def test_plain_uses_stay_approved(command: str) -> None:
    assert bash(OPEN, command) == "allow", OPEN.check("Bash", {"command": command}).reason


def test_awk_reads_its_file_operands_and_program_files() -> None:
    e = engine(allow=["Bash(awk *)"], deny=["Read(.env)"])
    assert bash(e, "awk 1 .env") == "deny"
    assert bash(e, "awk -f .env f") == "deny"
    assert bash(e, "awk '{print}' x=1 .env") == "deny"


_TAR_RUNNING = ["to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script",
                "rsh-command", "rmt-command"]


@SETTINGS
@given(st.sampled_from(_TAR_RUNNING), st.data(), st.sampled_from(["=id", ""]))
def test_every_prefix_of_a_tar_option_that_runs_a_program_asks(name: str, data: st.DataObject, value: str) -> None:
    k = data.draw(st.integers(min_value=3, max_value=len(name)))
    command = f"tar --{name[:k]}{value} -cf x.tar src"
    assert bash(OPEN, command) == "ask", (command, OPEN.check("Bash", {"command": command}).reason)


# -- paths through /proc and unknowable tilde forms -------------------------------------------

PROC = engine(allow=["Bash(cat *)", "Bash(cp *)", "Bash(ls *)"], deny=["Read(.env)", "Read(//etc/shadow)"])


@pytest.mark.parametrize("command", [
    "cat /proc/self/cwd/.env",
    "cat /proc/thread-self/cwd/.env",
    "cat /proc/self/task/7/cwd/.env",
    "cat /proc/self/./cwd//.env",
    "cat /proc/self/../self/cwd/.env",
    "cd sub; cat /proc/self/cwd/../.env",
    "cat /proc/1/root/etc/shadow",
    "cat /proc/self/root/etc/shadow",
    "cp /proc/self/cwd/.env /tmp/x",
])
def test_proc_links_lead_where_the_command_runs(command: str) -> None:
    assert bash(PROC, command) == "deny", PROC.check("Bash", {"command": command}).reason


@pytest.mark.parametrize("command", ["cat /proc/1/cwd/.env", "cat /proc/self/fd/3", "cat ~-/.env",
                                     "cp x ~-/y", "cat /proc/42/fd/1"])
def test_a_path_that_cannot_be_known_asks_when_deny_rules_exist(command: str) -> None:
    assert bash(PROC, command) == "ask", PROC.check("Bash", {"command": command}).reason
    assert bash(engine(allow=["Bash(cat *)", "Bash(cp *)"]), command) == "allow"


@pytest.mark.parametrize("command", ["cat /proc/cpuinfo", "cat /proc/self/status", "ls /proc/self/cwd/"])
def test_other_proc_files_stay_as_they_are(command: str) -> None:
    assert bash(PROC, command) == "allow", PROC.check("Bash", {"command": command}).reason


# -- git subcommands that run commands from their arguments -----------------------------------

GIT_ALLOWED = engine(allow=["Bash(git *)"], deny=["Bash(rm *)", "Bash(curl *)"])
GIT_RUNS = [
    "git submodule foreach {cmd}",
    "git submodule foreach --recursive '{cmd}'",
    "git bisect run {cmd}",
    "git rebase --exec '{cmd}' HEAD~1",
    "git rebase -x '{cmd}' HEAD~1",
    "git clone -u '{cmd}' repo",
    "git clone --upload-pack='{cmd}' repo",
    "git fetch --upload-pack '{cmd}'",
    "git push --receive-pack='{cmd}'",
    "git difftool -x '{cmd}'",
    "git difftool --extcmd='{cmd}'",
    "git filter-branch --tree-filter '{cmd}' HEAD",
    "git grep -O'{cmd}' foo",
]


@pytest.mark.parametrize("template", GIT_RUNS)
def test_git_subcommands_that_run_commands_are_judged(template: str) -> None:
    assert bash(GIT_ALLOWED, template.format(cmd="rm x")) == "deny"
    assert bash(GIT_ALLOWED, template.format(cmd="curl x")) == "deny"
    harmless = template.format(cmd="true")
    assert bash(GIT_ALLOWED, harmless) == "ask", GIT_ALLOWED.check("Bash", {"command": harmless}).reason


@SETTINGS
@given(st.sampled_from([("fetch", "upload-pack"), ("clone", "upload-pack"), ("push", "receive-pack"),
                        ("rebase", "exec"), ("difftool", "extcmd"), ("filter-branch", "tree-filter"),
                        ("filter-branch", "msg-filter"), ("grep", "open-files-in-pager")]), st.data())
def test_every_prefix_of_a_git_command_option_is_judged(case: tuple[str, str], data: st.DataObject) -> None:
    sub, name = case
    k = data.draw(st.integers(min_value=3, max_value=len(name)))
    command = f"git {sub} --{name[:k]}='rm -rf x'"
    assert bash(GIT_ALLOWED, command) == "deny", command


@pytest.mark.parametrize("command", ["git log --oneline", "git clone repo", "git submodule update", "git bisect start",
                                     "git rebase main"])
def test_plain_git_stays_approved(command: str) -> None:
    assert bash(GIT_ALLOWED, command) == "allow"


# -- writes named inside an archive or a patch -----------------------------------------------

HIDDEN = engine(allow=["Bash(patch *)", "Bash(unzip *)", "Bash(tar *)", "Bash(git *)", "Bash(cpio *)", "Bash(7z *)"],
                deny=["Edit(./protected/**)"])
UNGUARDED = engine(allow=["Bash(patch *)", "Bash(unzip *)", "Bash(tar *)", "Bash(git *)", "Bash(cpio *)",
                          "Bash(7z *)"])


@pytest.mark.parametrize("command", [
    "patch -p1 < fix.diff",
    "patch -p1 -i fix.diff",
    "patch src/a.py fix.diff",
    "unzip x.zip",
    "unzip -o x.zip -d out",
    "tar -xf x.tar",
    "tar xzf x.tgz",
    "tar --extract -f x.tar",
    "cpio -idv < x.cpio",
    "7z x x.7z",
    "git apply fix.diff",
    "git apply --index fix.diff",
    "git am fix.mbox",
])
def test_files_named_inside_an_archive_or_patch_ask_while_deny_rules_exist(command: str) -> None:
    assert bash(HIDDEN, command) == "ask", HIDDEN.check("Bash", {"command": command}).reason
    assert bash(UNGUARDED, command) == "allow", UNGUARDED.check("Bash", {"command": command}).reason


@pytest.mark.parametrize("command", ["patch --dry-run -p1 < fix.diff", "unzip -l x.zip",
                                     "git apply --check fix.diff", "git apply --stat fix.diff"])
def test_listing_or_checking_writes_nothing_hidden(command: str) -> None:
    assert bash(HIDDEN, command) == "allow", HIDDEN.check("Bash", {"command": command}).reason


def test_prompt_expansion_runs_the_substitutions_in_a_value() -> None:
    e = engine(deny=["Bash(rm *)"], allow=["Bash(echo *)"])
    assert bash(e, "x='$(rm -rf y)'; echo ${x@P}") == "deny"
    assert bash(e, "x='$(id)'; echo ${x@P}") == "ask"


# -- brace expansion makes several words ------------------------------------------------------

BRACED = engine(allow=["Bash(touch *)", "Bash(cp *)", "Bash(tee *)", "Bash(cat *)", "Bash(rm *)"],
                deny=["Edit(//etc/**)", "Read(//home/u/.ssh/**)"])


@pytest.mark.parametrize("command", [
    "touch {a,/etc/b}",
    "cp src/a.py {x,/etc/y}",
    "cp {src/a.py,/etc/passwd}",
    "tee {a,/etc/cron.d/x}",
    "touch /{tmp,etc}/x",
    "touch /e{t,}c/x",
    "cat {a,/home/u/.ssh/id_rsa}",
    "cat /home/u/.ss{h,x}/id_rsa",
    "touch {a,{b,/etc/c}}",
])
def test_brace_expansion_reaches_every_word_it_makes(command: str) -> None:
    assert bash(BRACED, command) == "deny", BRACED.check("Bash", {"command": command}).reason


def test_a_brace_that_expands_to_a_critical_path_is_critical() -> None:
    assert bash(BRACED, "rm -rf {x,/}") == "ask"
    assert bash(BRACED, "touch {a,b}") == "allow"


_PIECE = st.sampled_from(["a", "b", "/", ".", "x", ",", "{", "}", "1..3", "c..a", "-"])


@SETTINGS
@given(st.lists(_PIECE, min_size=1, max_size=9).map("".join))
@example("{{,}")
@example("a{},}")
@example("a{b}}c,d}")
@example("x{{a,b}}")
@example("a{b{c,d}e}f")
@example("{1..3a},}")
@example("{a..}x,y}")
@example("{1..3}x,}")
@example("{1..3{1..3}}")
@example("{1..3{a,b}}")
@example("{x{a,b}}")
@example("x{1..2{a,b}}y")
def test_brace_expansion_agrees_with_bash(word: str) -> None:
    import subprocess

    from pegboard_permissions_shell.bash import brace_expand

    got = brace_expand(word)
    proc = subprocess.run(["bash", "-c", f"printf '%s\\n' {word}"], capture_output=True, text=True, timeout=10)
    if proc.returncode != 0:
        return
    expected = proc.stdout.split("\n")[:-1]
    if got is not None:
        assert [w for w in got if w] == [w for w in expected if w], word


@pytest.mark.parametrize("command", ["split src/a.py /etc/x", "split -l 10 src/a.py /etc/piece",
                                     "csplit -f /etc/x src/a.py 1", "csplit --pre=/etc/x src/a.py 1",
                                     "shuf -o /etc/x src/a.py", "shuf --ou=/etc/x src/a.py", "split .env",
                                     "shuf .env", "shuf --random-source=.env -i 1-5"])
def test_split_and_shuf_writes_and_reads_are_checked(command: str) -> None:
    e = engine(allow=["Bash(split *)", "Bash(csplit *)", "Bash(shuf *)"], deny=["Edit(//etc/**)", "Read(.env)"])
    assert bash(e, command) == "deny", e.check("Bash", {"command": command}).reason


def test_split_and_shuf_inside_stay_approved() -> None:
    e = engine(allow=["Bash(split *)", "Bash(shuf *)"], deny=["Edit(//etc/**)"])
    assert bash(e, "split -l 100 data.txt part_") == "allow"
    assert bash(e, "shuf -n 3 data.txt") == "allow"
    assert bash(e, "shuf -e a b c") == "allow"
    assert bash(e, "split --filter='rm x' data.txt") == "ask"


GIT_OUTPUT = engine(allow=["Bash(git diff *)", "Bash(git log *)", "Bash(git show *)"], deny=["Edit(//etc/**)"])


@pytest.mark.parametrize("command", [
    "git diff --output=/etc/x",
    "git diff --output /etc/x HEAD",
    "git log -p --output=/etc/cron.d/job",
    "git -C . show --output=/etc/passwd HEAD",
])
def test_a_git_output_file_is_judged_by_edit_rules(command: str) -> None:
    assert bash(GIT_OUTPUT, command) == "deny", GIT_OUTPUT.check("Bash", {"command": command}).reason


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=3, max_value=6), st.booleans())
def test_every_prefix_of_git_output_is_judged(length: int, glued: bool) -> None:
    option = "--" + "output"[:length]
    command = f"git diff {option}=/etc/x" if glued else f"git diff {option} /etc/x"
    assert bash(GIT_OUTPUT, command) == "deny"


def test_git_output_inside_asks_and_indicators_are_not_files() -> None:
    assert bash(GIT_OUTPUT, "git diff --output=changes.patch") == "ask"
    assert bash(GIT_OUTPUT, "git diff --output-indicator-new=+ HEAD") == "allow"
