"""memory_search ranks memory entries and note paragraphs with BM25."""

from __future__ import annotations

from pathlib import Path

import pegboard_memory
from pegboard import ConfigLayer, MemorySessionStore, Pegboard
from pegboard.testing import isolated_pegboard


def board(tmp_path: Path) -> Pegboard:
    notes = tmp_path / "notes"
    (notes / "db").mkdir(parents=True)
    (notes / "db" / "postgres.md").write_text(
        "# Postgres\n\nThe migration to Postgres 16 runs on Fridays.\nPostgres migration needs a backup.\n\n"
        "Unrelated paragraph about lunch.\n"
    )
    (notes / "deploy.md").write_text("Deploys go out after the migration window.\n")
    (notes / "cafe.txt").write_text("Café opening hours: nine to five.\n")
    (notes / "ignored.bin").write_text("postgres migration postgres migration\n")
    (notes / ".hidden.md").write_text("postgres migration postgres migration\n")
    env = {"PEGBOARD_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
    config = {"tools": {"memory": {"notes": ["../notes"], "refreshSeconds": 0}}}
    (tmp_path / "proj").mkdir()
    return isolated_pegboard(pegboard_memory, cwd=tmp_path / "proj", env=env, config=config)


async def test_ranking_on_a_small_corpus(tmp_path: Path) -> None:
    pb = board(tmp_path)
    result = await pb.call("memory_search", {"query": "postgres migration"})
    assert result.structured is not None
    hits = result.structured["results"]
    assert [h["path"] for h in hits[:2]] == [str(tmp_path / "notes/db/postgres.md")] * 2
    assert (hits[0]["startLine"], hits[0]["endLine"]) == (3, 4)
    assert hits[-1]["path"].endswith("deploy.md") and hits[0]["score"] > hits[-1]["score"]
    assert all("ignored" not in h["path"] and "hidden" not in h["path"] for h in hits)
    accent = await pb.call("memory_search", {"query": "cafe"})
    assert accent.structured is not None and accent.structured["results"][0]["path"].endswith("cafe.txt")
    strict = await pb.call("memory_search", {"query": "postgres migration", "minScore": hits[0]["score"]})
    assert strict.structured is not None and len(strict.structured["results"]) >= 1
    assert all(h["score"] >= hits[0]["score"] for h in strict.structured["results"])
    got = await pb.call("memory_get", {"path": hits[0]["path"], "from": 3, "lines": 2})
    assert got.text.startswith("The migration to Postgres 16")
    nothing = await pb.call("memory_search", {"query": "kubernetes"})
    assert nothing.structured == {"results": []} and "No memory matches" in nothing.text
    punctuation = await pb.call("memory_search", {"query": '"*) OR ('})
    assert not punctuation.is_error


async def test_search_sees_changes(tmp_path: Path) -> None:
    pb = board(tmp_path)
    await pb.call("memory", {"action": "add", "content": "Kubernetes clusters live in eu-west"})
    found = await pb.call("memory_search", {"query": "kubernetes"})
    assert found.structured is not None and found.structured["results"][0]["path"] == ".pegboard/memory/MEMORY.md"
    (tmp_path / "notes" / "deploy.md").unlink()
    gone = await pb.call("memory_search", {"query": "window"})
    assert gone.structured == {"results": []}
    await pb.call("memory", {"action": "remove", "old_text": "Kubernetes"})
    after = await pb.call("memory_search", {"query": "kubernetes"})
    assert after.structured == {"results": []}


def test_rescans_at_most_every_refresh_seconds(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("orchids need little water\n")
    where = pegboard_memory.MemoryRoots(tmp_path / "p", tmp_path / "u", (notes,), tmp_path, 8_000)
    now = [100.0]
    index = pegboard_memory.MemoryIndex(refresh_seconds=5, clock=lambda: now[0])
    assert [h[0] for h in index.search(where, "orchids", 5)] == [str(notes / "a.md")]
    (notes / "b.md").write_text("more orchids\n")
    now[0] += 4
    assert len(index.search(where, "orchids", 5)) == 1
    now[0] += 2
    assert len(index.search(where, "orchids", 5)) == 2
    (notes / "b.md").unlink()
    index.touch()
    assert len(index.search(where, "orchids", 5)) == 1


async def test_an_untrusted_projects_note_directories_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keys.md").write_text("orchid passphrase hint\n")
    layer = ConfigLayer("project", {"tools": {"memory": {"notes": ["../outside"]}}}, root=tmp_path, trusted=False)
    (tmp_path / "proj").mkdir()
    pb = Pegboard(plugins=[pegboard_memory], load_entrypoints=False, layers=[layer], cwd=tmp_path / "proj",
                  env={"PEGBOARD_DATA_DIR": str(tmp_path / "data")}, store=MemorySessionStore())
    assert any("tools.memory.notes" in w and "pegboard trust" in w for w in pb.warnings)
    found = await pb.call("memory_search", {"query": "orchid"})
    assert found.structured == {"results": []}
    got = await pb.call("memory_get", {"path": str(tmp_path / "outside" / "keys.md")})
    assert got.metadata["error_kind"] == "not_memory"
