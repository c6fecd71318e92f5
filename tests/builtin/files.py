"""Real files for the file-tool tests: trees, PDFs, notebooks and images made on the spot."""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def make_tree(root: Path) -> Path:
    """A small project tree: unicode and space names, dotfiles, a git dir, ignored files,
    symlinks (a loop, one out of the tree, a broken one) and a binary file."""
    (root / "src" / "deep" / "deeper").mkdir(parents=True)
    (root / "docs with space").mkdir()
    (root / ".git" / "objects").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\nneedle in git\n")
    (root / "build").mkdir()
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / "app.py").write_text("import os\n\ndef main():\n    return 'needle'\n")
    (root / "src" / "util.py").write_text("def helper():\n    pass  # Needle here\n")
    (root / "src" / "deep" / "deeper" / "core.py").write_text("NEEDLE = 1\n")
    (root / "src" / "deep" / "notes.md").write_text("# Notes\nneedle in markdown\n")
    (root / "docs with space" / "ünïcödé naïve.txt").write_text("needle unicode ✓\n", encoding="utf-8")
    (root / ".hidden.py").write_text("needle hidden\n")
    (root / "build" / "out.py").write_text("needle built\n")
    (root / "debug.log").write_text("needle log\n")
    (root / "blob.bin").write_bytes(b"needle\x00\x01\x02" * 10)
    (root / "README.md").write_text("Readme: no match here\n")
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.py").write_text("needle outside\n")
    os.symlink(outside, root / "link-out")
    os.symlink(root / "src", root / "src" / "deep" / "loop")
    os.symlink(root / "nowhere", root / "broken-link")
    os.symlink(root / "src" / "app.py", root / "app-link.py")
    stamp_distinct(root)
    return root


def stamp_distinct(root: Path) -> None:
    """Give every regular file its own modification time (files written within one clock
    tick share one, and then "newest first" leaves their order to the backend)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and ".git" not in p.parts)
    for n, path in enumerate(files):
        os.utime(path, (1_600_000_000 + n * 10, 1_600_000_000 + n * 10))


def pdf_bytes(pages: int, text: str = "Page") -> bytes:
    """A valid PDF with one line of text on each page ("Page 1", "Page 2" ...)."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    font = 3 + 2 * pages
    for i in range(pages):
        stream = f"BT /F1 24 Tf 72 720 Td ({text} {i + 1}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def image_bytes(width: int, height: int, fmt: str = "PNG", noisy: bool = False) -> bytes:
    from PIL import Image

    if noisy:
        rng = random.Random(7)
        image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (30, 120, 200))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def notebook(path: Path) -> Path:
    import base64

    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    png = base64.b64encode(image_bytes(40, 30)).decode()
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("# Title\nSome *markdown*."),
        new_code_cell(
            "print('hello')\n1 + 1",
            outputs=[
                new_output("stream", name="stdout", text="hello\n"),
                new_output("execute_result", data={"text/plain": "2"}, execution_count=1),
            ],
        ),
        new_code_cell(
            "plot()", outputs=[new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]
        ),
        new_code_cell("1/0", outputs=[new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                                 traceback=["\x1b[31mTraceback\x1b[0m", "ZeroDivisionError"])]),
    ]
    nbformat.write(nb, str(path))
    return path
