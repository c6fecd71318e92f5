"""Reading entry points from dist-info folders without importlib.metadata."""

from __future__ import annotations

from pathlib import Path

from pegboard.core.entrypoints import entry_points


def make_dist(site: Path, folder: str, text: str) -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / "entry_points.txt").write_text(text)


def test_groups_names_versions_and_first_copy_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    make_dist(first, "acme_tools-1.2.3.dist-info", "[console_scripts]\nx = y:z\n\n[pegboard]\nacme = acme_tools\n")
    make_dist(second, "acme_tools-0.9.dist-info", "[pegboard]\nold = acme_old\n")
    make_dist(second, "other-2.0.dist-info", "[pegboard.commands]\n# a comment\nhello = other.cli:hello\n")
    make_dist(second, "legacy.egg-info", "[pegboard]\nlegacy = legacy_mod:plugin.inner\n")
    (second / "not-a-dist").mkdir()
    eps = entry_points("pegboard", [str(first), str(second), str(tmp_path / "missing")])
    assert [(e.name, e.value, e.dist_name, e.version) for e in eps] == [
        ("acme", "acme_tools", "acme-tools", "1.2.3"),
        ("legacy", "legacy_mod:plugin.inner", "legacy", None),
    ]
    (hello,) = entry_points("pegboard.commands", [str(second)])
    assert (hello.name, hello.value, hello.dist_name) == ("hello", "other.cli:hello", "other")


def test_load_follows_the_attribute_path() -> None:
    from pegboard.core.entrypoints import EntryPoint

    assert EntryPoint("x", "os.path:join", "g").load() is __import__("os").path.join
    assert EntryPoint("x", "json", "g").load() is __import__("json")
