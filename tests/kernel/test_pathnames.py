"""resolve_path: tilde forms as bash expands them, normalisation, symlinks, odd input."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pegboard
from pegboard import InvalidPathError, resolve_path
from pegboard.core.pathnames import expand_tilde


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A real tree: home, work/sub, old, links (to a dir, relative, dangling, a loop)."""
    root = tmp_path.resolve()
    for d in ("home/u", "work/sub", "old", "target/inner"):
        (root / d).mkdir(parents=True)
    (root / "work" / "file.txt").write_text("x")
    (root / "work" / "to-target").symlink_to(root / "target")
    (root / "work" / "rel").symlink_to("../target/inner")
    (root / "work" / "dangling").symlink_to(root / "nowhere" / "deep")
    (root / "work" / "loop-a").symlink_to("loop-b")
    (root / "work" / "loop-b").symlink_to("loop-a")
    return root


def me() -> pwd.struct_passwd:
    return pwd.getpwuid(os.getuid())


def test_public_names() -> None:
    assert pegboard.resolve_path is resolve_path
    assert {"resolve_path", "InvalidPathError"} <= set(pegboard.__all__)
    assert issubclass(InvalidPathError, ValueError)


def test_tilde_forms(tree: Path) -> None:
    home, cwd, old = tree / "home" / "u", tree / "work", tree / "old"
    assert resolve_path("~", cwd, home) == home
    assert resolve_path("~/a/b", cwd, home) == home / "a" / "b"
    assert resolve_path("~+", cwd, home) == cwd
    assert resolve_path("~+/file.txt", cwd, home) == cwd / "file.txt"
    assert resolve_path("~0/file.txt", cwd, home) == cwd / "file.txt"
    assert resolve_path("~-/x", cwd, home, oldpwd=old) == old / "x"
    # Without a previous directory bash leaves ~- alone: a name under the cwd.
    assert resolve_path("~-/x", cwd, home) == cwd / "~-" / "x"
    assert resolve_path("~2/x", cwd, home) == cwd / "~2" / "x"
    user = me()
    assert resolve_path(f"~{user.pw_name}/x", cwd, home) == Path(os.path.realpath(user.pw_dir)) / "x"
    assert resolve_path("~root", cwd, home) == Path(os.path.realpath(pwd.getpwnam("root").pw_dir))
    assert resolve_path("~no-such-user-here/x", cwd, home) == cwd / "~no-such-user-here" / "x"
    assert resolve_path("a/~root", cwd, home) == cwd / "a" / "~root", "only a leading tilde expands"


def test_tilde_forms_agree_with_bash(tree: Path) -> None:
    home, cwd, old = tree / "home" / "u", tree / "work", tree / "old"
    words = ["~", "~/a", "~+", "~+/a", "~-", "~-/a", "~root", "~root/a", "~nosuchuser/a", "~0", "~1"]
    script = f"cd {old} && cd {cwd} && printf '%s\\n' " + " ".join(words)
    out = subprocess.run(["bash", "-c", script], env={"HOME": str(home), "PATH": os.environ["PATH"]},
                         capture_output=True, text=True, check=True).stdout.splitlines()
    for word, expanded in zip(words, out, strict=True):
        assert resolve_path(word, cwd, home, oldpwd=old) == resolve_path(expanded, cwd, home), word


def test_home_defaults_to_the_environment(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree / "home" / "u"))
    assert resolve_path("~/x", tree) == tree / "home" / "u" / "x"
    monkeypatch.delenv("HOME")
    assert resolve_path("~", tree) == Path(os.path.realpath(me().pw_dir))
    assert expand_tilde("~", "", "/w") is None, "HOME='' leaves ~ literal, as in bash"


def test_normalisation_and_symlinks(tree: Path) -> None:
    cwd = tree / "work"
    assert resolve_path("sub//./x/../y", cwd) == cwd / "sub" / "y"
    assert resolve_path("//" + str(cwd).lstrip("/") + "//file.txt", "/") == cwd / "file.txt"
    assert resolve_path("to-target/inner", cwd) == tree / "target" / "inner"
    # '..' after a link applies to where the link led, as the kernel applies it.
    assert resolve_path("rel/..", cwd) == tree / "target"
    assert resolve_path("rel/../../work/file.txt", cwd) == cwd / "file.txt"
    assert resolve_path("dangling/more", cwd) == tree / "nowhere" / "deep" / "more"
    assert resolve_path("missing/../sub", cwd) == cwd / "sub"
    assert resolve_path("file.txt/..", cwd) == cwd
    assert resolve_path("loop-a/x", cwd) == cwd / "loop-a" / "x", "a loop does not raise: the link stays a name"
    assert resolve_path("loop-a/../to-target", cwd) == tree / "target"
    assert resolve_path("../../../../../../../../etc", cwd) == Path("/etc")
    assert resolve_path("x", "relative-cwd") == Path(os.getcwd()).resolve() / "relative-cwd" / "x"


@pytest.mark.parametrize("bad", ["", "a\x00b", b"bytes", 42, None, "\ud800"])
def test_odd_input_gives_a_clear_error(tree: Path, bad: object) -> None:
    with pytest.raises(InvalidPathError):
        resolve_path(bad, tree)  # type: ignore[arg-type]


def test_odd_cwd_and_home(tree: Path) -> None:
    with pytest.raises(InvalidPathError):
        resolve_path("x", "a\x00b")
    with pytest.raises(InvalidPathError):
        resolve_path("~", tree, "h\x00")


_SEGMENTS = st.sampled_from(
    ["..", ".", "", "sub", "file.txt", "to-target", "rel", "dangling", "loop-a", "inner", "new", "~", "~+", "x y"]
)
_PATHS = st.builds(
    lambda lead, segs: lead + "/".join(segs),
    st.sampled_from(["", "/", "//", "~/", "~+/", "~-/", "~root/", "~nouser/", "../", "~"]),
    st.lists(_SEGMENTS, max_size=8),
).filter(bool)
_PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPS
@given(path=_PATHS)
def test_idempotent_and_never_above_root(tree: Path, path: str) -> None:
    cwd, home, old = tree / "work", tree / "home" / "u", tree / "old"
    once = resolve_path(path, cwd, home, oldpwd=old)
    assert once.is_absolute()
    assert ".." not in once.parts and "." not in once.parts and "//" not in str(once)
    assert resolve_path(once, cwd, home, oldpwd=old) == once
    assert resolve_path(str(once), "/elsewhere", "/nohome") == once, "an absolute result needs no context"


@_PROPS
@given(rest=st.lists(st.sampled_from(["sub", "x", "..", ".", "file.txt", "rel"]), max_size=5))
def test_tilde_forms_equal_their_expansion(tree: Path, rest: list[str]) -> None:
    cwd, home, old = tree / "work", tree / "home" / "u", tree / "old"
    tail = "/".join(rest)
    for word, base in (("~", home), ("~+", cwd), ("~0", cwd), ("~-", old), (f"~{me().pw_name}", Path(me().pw_dir))):
        spelled = word + ("/" + tail if tail else "")
        assert resolve_path(spelled, cwd, home, oldpwd=old) == resolve_path(f"{base}/{tail}", cwd, home), spelled


@settings(max_examples=300, deadline=None)
@given(path=st.text(max_size=40), cwd=st.text(max_size=20))
def test_any_text_gives_a_path_or_its_own_error(path: str, cwd: str) -> None:
    try:
        result = resolve_path(path, "/" + cwd, "/home/nobody")
    except InvalidPathError:
        return
    assert result.is_absolute()


_PARTS = st.lists(st.sampled_from(["work", "sub", "to-target", "rel", "inner", "target", "..", ".", "file.txt",
                                   "dangling", "loop-a", "chain", "up", "missing"]), max_size=7)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=_PARTS)
def test_the_kernel_and_the_walk_resolve_alike(tree: Path, parts: list[str]) -> None:
    """Where the kernel resolves a path itself (it exists whole), the answer is the walk's."""
    from pegboard.core.pathnames import MAX_LINKS_PER_PATH, _walk, kernel_resolved

    if not (tree / "work" / "chain").is_symlink():
        (tree / "work" / "chain").symlink_to("to-target/inner")  # a link through a link
        (tree / "target" / "inner" / "up").symlink_to("../..")  # a link climbing back out
    path = "/".join([str(tree), *parts])
    kernel = kernel_resolved(path)
    walked = _walk(path, 0, [MAX_LINKS_PER_PATH])
    if kernel is not None:
        assert kernel == walked
    if os.path.exists(path) and not path.endswith("/"):
        assert kernel == os.path.realpath(path) or not hasattr(os, "O_PATH")
