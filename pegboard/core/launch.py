"""The ``pegboard`` console script: ``pegboard tools`` from the start-up cache, the rest through click.

Nothing here imports click, pydantic or a plugin, so a cached answer costs little more than
the interpreter's start; ``pegboard.core.outputcache`` says when an answer may be replayed.
Every other command line goes to ``pegboard.core.cli.main`` unchanged.
"""

from __future__ import annotations

import io
import os
import sys

from pegboard.core import outputcache

TYPE_CHECKING = False  # ``typing`` and ``collections`` are not needed at run time here
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

#: per cacheable command: options that take no value, options that take one
CACHEABLE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "tools": (
        frozenset({"--json", "--explain"}),
        frozenset({"--provider", "--model", "--agent", "--profile", "--subagent", "--config", "--cwd"}),
    ),
}


def project_cwd(argv: Sequence[str]) -> str | None:
    """The directory whose project the command line is about, or ``None`` when it is not cacheable.

    Only command lines made of known options qualify; ``--help``, ``--wait-mcp``, a
    misspelled option or a stray argument go the normal way.
    """
    if not argv or argv[0] not in CACHEABLE:
        return None
    flags, valued = CACHEABLE[argv[0]]
    cwd = os.getcwd()
    rest = list(argv[1:])
    while rest:
        token = rest.pop(0)
        name, eq, value = token.partition("=")
        if token in flags:
            continue
        if name not in valued:
            return None
        if not eq:
            if not rest or rest[0].startswith("-"):  # a value that looks like an option: the normal way
                return None
            value = rest.pop(0)
        if name == "--cwd":
            cwd = os.path.join(os.getcwd(), value)
    return cwd


class _Tee(io.RawIOBase):
    """Passes writes to a real stream and keeps a copy; a terminal stays a terminal."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target
        self.copy = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.target.write(chunk)
        self.copy += chunk
        return len(chunk)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return bool(self.target.isatty())

    def fileno(self) -> int:
        return int(self.target.fileno())


def _tee(stream: Any) -> tuple[Any, _Tee]:
    tee = _Tee(stream.buffer)
    wrapper = io.TextIOWrapper(
        io.BufferedWriter(tee), encoding=stream.encoding, errors=stream.errors, line_buffering=True, write_through=True
    )
    return wrapper, tee


def _text(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "surrogateescape")


def _replay(entry: dict[str, Any]) -> NoReturn:
    for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
        text = entry.get(name)
        if isinstance(text, str) and text:
            try:
                stream.flush()
                stream.buffer.write(text.encode("utf-8", "surrogateescape"))
                stream.buffer.flush()
            except BrokenPipeError:  # the reader left (``| head``): as quiet as a finished write
                os._exit(1)
    sys.exit(0)


def _run(argv: list[str]) -> Any:
    from pegboard.core.cli import main as cli_main

    return cli_main(argv)


def _run_and_store(argv: list[str], cwd: str, env: dict[str, str], digest: str) -> NoReturn:
    """Run the command normally, recording what it reads; store its output if it may be replayed."""
    recorder = outputcache.Recorder(ignore=[outputcache.cache_dir()]).start()
    real_out, real_err = sys.stdout, sys.stderr
    (sys.stdout, out), (sys.stderr, err) = _tee(real_out), _tee(real_err)
    code: Any = 0
    try:
        _run(argv)
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = real_out, real_err
        real_out.flush()
        real_err.flush()
        recorder.stop()
    # A directory that changed during the run (a first import writing ``__pycache__``) may
    # have changed what the run found: the next run stores its answer instead.
    settled = outputcache.key(argv[0], argv, cwd, env) == digest
    if code in (0, None) and settled and not recorder.uncacheable:
        outputcache.store(
            argv[0], digest, recorder.dependencies(), {"stdout": _text(out.copy), "stderr": _text(err.copy)}
        )
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> Any:
    """Entry point of the ``pegboard`` script and ``python -m pegboard``."""
    args = list(sys.argv[1:] if argv is None else argv)
    cwd = project_cwd(args)
    streams = all(hasattr(stream, "buffer") for stream in (sys.stdout, sys.stderr))
    if cwd is None or not streams or outputcache.disabled():  # captured streams: run in-process as is
        return _run(args)
    env = dict(os.environ)  # as the process found it; the CLI itself sets a variable or two
    digest = outputcache.key(args[0], args, cwd, env)
    if digest is None:
        return _run(args)
    entry = outputcache.lookup(args[0], digest)
    if entry is not None:
        _replay(entry)
    _run_and_store(args, cwd, env, digest)
