"""Does the config load? Answered from the start-up cache while nothing it read has changed.

A server checks its config before it answers anyone (a broken config is an error, not a
server that cannot serve), but validating means importing pydantic and building the config
models, which alone costs more than the server's whole start. The same cache that replays
``pegboard tools`` remembers that a config loaded, under the same conditions: every file it
read, every directory it could find a file in, the environment. A broken config is never
remembered, so it is reported on every start.
"""

from __future__ import annotations

import os

from pegboard.core import outputcache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path


def config_problem(
    cwd: Path | None = None, config_files: Sequence[Path] = (), *, env: Mapping[str, str] | None = None
) -> str | None:
    """``None`` when the config that applies in ``cwd`` (plus ``config_files``) loads; else the
    error message, naming file, key and what was expected."""
    snapshot = dict(os.environ if env is None else env)
    where = str(cwd) if cwd is not None else os.getcwd()
    argv = [str(path) for path in config_files]
    digest = None if outputcache.disabled(snapshot) else outputcache.key("config", argv, where, snapshot)
    if digest is not None and outputcache.lookup("config", digest, snapshot) is not None:
        return None
    recorder = outputcache.Recorder(ignore=[outputcache.cache_dir(snapshot)]).start()
    try:
        from pegboard.core.config import ConfigError, load_config

        try:
            load_config(cwd, list(config_files), env=env)
        except ConfigError as exc:
            return str(exc)
    finally:
        recorder.stop()
    settled = digest is not None and outputcache.key("config", argv, where, snapshot) == digest
    if digest is not None and settled and not recorder.uncacheable:
        outputcache.store("config", digest, recorder.dependencies(), {"loads": "yes"}, snapshot)
    return None
