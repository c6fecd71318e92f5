"""The start-up cache: a command's output, replayed while nothing it depended on has changed.

Listing tools imports every plugin, pydantic and click, which costs many times the
interpreter's own start. The answer, though, changes only when something it read changes.
A run of a cacheable command records what it depended on, and the next run with the same
key prints the stored output without importing any of that.

What the answer depends on comes in two parts:

- the **key**, computed before running: the command line, the working directory, the
  interpreter, its flags and its ``sys.path``, every environment variable, which standard
  streams are terminals, and the state of the directories whose contents decide what is
  found (each ``sys.path`` directory, the project root and its ``.pegboard`` tree, the user
  and managed config trees);
- the **files** seen while running: every file opened (including those that were missing)
  and every directory listed, recorded through an audit hook; every place ``shutil.which``
  looked for a program; and the source file of every module imported. An entry is served
  only if each of them is exactly as recorded (modification time, size, inode), so an edited
  plugin, ``entry_points.txt`` or config file, or a program installed on ``PATH``, is never
  answered from the cache.

A run is not stored when it started a process, opened a network connection, exited
non-zero, or when a plugin failed to load: its answer may depend on something outside
these files. ``PEGBOARD_NO_CACHE=1`` turns the cache off; the entries live in
``PEGBOARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/pegboard``, else ``~/.cache/pegboard``, one
file per key, written atomically.

Importing this module costs next to nothing: it is what the fast path runs.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # ``typing`` and ``collections`` are not needed at run time here
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

FORMAT = 1
CACHE_DIR_ENV = "PEGBOARD_CACHE_DIR"
NO_CACHE_ENV = "PEGBOARD_NO_CACHE"
#: variables a shell changes on every command without changing any answer
SHELL_NOISE = frozenset({"_", "OLDPWD", "PWD", "SHLVL"})
#: audit events after which a run's answer may depend on the world outside its files
OUTSIDE_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
    }
)
MAX_TREE_DIRS = 256
MAX_ENTRIES = 32
_VOLATILE = ("/dev/", "/proc/", "/sys/")

Stamp = list[int] | None


def disabled(env: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(NO_CACHE_ENV, "").strip().lower()
    return value not in ("", "0", "false", "no")


def cache_dir(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    if env.get(CACHE_DIR_ENV):
        return env[CACHE_DIR_ENV]
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pegboard")


def stamp(path: str) -> Stamp:
    """What identifies a file's or directory's current state; ``None`` when it is missing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _tree(root: str) -> list[tuple[str, Stamp]]:
    """``root`` and every directory below it, so that a file appearing anywhere shows."""
    found: list[tuple[str, Stamp]] = [(root, stamp(root))]
    if found[0][1] is None:
        return found
    pending = [root]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        found.append((entry.path, stamp(entry.path)))
                        pending.append(entry.path)
        except OSError:
            continue
        if len(found) > MAX_TREE_DIRS:
            raise _TooBig(root)
    return found


class _TooBig(Exception):
    """A config tree too large to check on every start; the cache stays out of the way."""


def _project_dirs(cwd: str) -> list[tuple[str, Stamp]]:
    """The probes that find the project root (as ``find_project_root`` makes them) and the root's trees."""
    seen: list[tuple[str, Stamp]] = []
    current = cwd
    while True:
        marker, git = os.path.join(current, ".pegboard"), os.path.join(current, ".git")
        found_marker = os.path.isdir(marker)
        found_git = os.path.exists(git)
        seen.append((current, [int(found_marker), int(found_git)]))
        if found_marker or found_git:
            break
        parent = os.path.dirname(current)
        if parent == current:
            current = cwd
            break
        current = parent
    seen.append((current, stamp(current)))  # files appearing in the root (.mcp.json, ...)
    return seen + _tree(os.path.join(current, ".pegboard"))


def _config_dirs(env: Mapping[str, str]) -> list[tuple[str, Stamp]]:
    user = env.get("PEGBOARD_CONFIG_DIR") or os.path.join(
        env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config"), "pegboard"
    )
    managed = env.get("PEGBOARD_MANAGED_CONFIG_DIR") or "/etc/pegboard"
    return _tree(user) + _tree(managed)


def _streams() -> list[bool]:
    out = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            out.append(bool(stream and stream.isatty()))
        except (AttributeError, ValueError, OSError):
            out.append(False)
    return out


def key(command: str, argv: Sequence[str], cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    """The key of a run of ``command`` with ``argv`` for a project at ``cwd`` (the process's own
    working directory counts too: relative paths in ``argv`` resolve against it); ``None`` when
    it cannot be cached."""
    env = os.environ if env is None else env
    cwd = os.path.abspath(cwd)
    try:
        dirs = [(d, stamp(d)) for d in sys.path if d]
        dirs += _project_dirs(cwd) + _config_dirs(env)
    except _TooBig:
        return None
    parts = [
        FORMAT,
        sys.version,
        sys.executable,
        list(sys.flags),
        sys.warnoptions,
        sorted(sys._xoptions.items()),
        sys.path,
        command,
        list(argv),
        os.getcwd(),
        cwd,
        sorted((k, v) for k, v in env.items() if k not in SHELL_NOISE),
        _streams(),
        dirs,
    ]
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return _sha256()(text.encode("utf-8", "surrogateescape")).hexdigest()


def _sha256() -> Callable[[bytes], Any]:
    """SHA-256 without ``hashlib``'s OpenSSL import where the built-in module is at hand."""
    for name in ("_sha2", "_sha256"):
        try:
            sha256: Callable[[bytes], Any] = __import__(name).sha256
            return sha256
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256


def _entry_path(command: str, digest: str, env: Mapping[str, str] | None) -> str:
    return os.path.join(cache_dir(env), f"{command}-{digest[:40]}.json")


def lookup(command: str, digest: str, env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The stored entry for ``digest`` when every file it recorded is unchanged, else ``None``."""
    try:
        with open(_entry_path(command, digest, env), encoding="utf-8") as fh:
            entry = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != digest:
        return None
    files = entry.get("files")
    if not isinstance(files, list):
        return None
    for item in files:
        if not (isinstance(item, list) and len(item) == 2) or stamp(item[0]) != item[1]:
            return None
    return entry


def store(
    command: str,
    digest: str,
    files: Iterable[tuple[str, Stamp]],
    output: Mapping[str, str],
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Write an entry atomically (readers see the old one or the new one); ``None`` if it cannot be written."""
    import tempfile

    directory = cache_dir(env)
    entry = {"format": FORMAT, "key": digest, "files": [[p, s] for p, s in files], **output}
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".entry-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh, ensure_ascii=False)
            path = _entry_path(command, digest, env)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return None
    _prune(directory)
    return path


def _prune(directory: str) -> None:
    """Keep the newest ``MAX_ENTRIES`` entries: keys differ per directory and option set."""
    try:
        entries = [e for e in os.scandir(directory) if e.name.endswith(".json") and not e.name.startswith(".")]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            os.unlink(old.path)
    except OSError:
        pass


class Recorder:
    """Records, through an audit hook, what a run reads, and whether it reached outside its files.

    Audit hooks cannot be removed, so a stopped recorder's hook only returns.
    """

    current: Recorder | None = None

    def __init__(self, ignore: Sequence[str] = ()) -> None:
        self.files: dict[str, Stamp] = {}
        self.uncacheable: list[str] = []
        self.ignore = tuple(ignore)
        self.active = False

    def start(self) -> Recorder:
        import shutil

        self.active = True
        Recorder.current = self
        sys.addaudithook(self._hook)
        self._which = shutil.which
        shutil.which = self._recording_which
        return self

    def stop(self) -> None:
        import shutil

        self.active = False
        if Recorder.current is self:
            Recorder.current = None
        if shutil.which == self._recording_which:
            shutil.which = self._which

    def _recording_which(self, cmd: Any, mode: int = os.F_OK | os.X_OK, path: Any = None) -> Any:
        """``shutil.which``, noting each place it looks: a program installed later shows there."""
        found = self._which(cmd, mode, path)
        if self.active and isinstance(cmd, str):
            if os.path.dirname(cmd):
                self._note(cmd)
            else:
                search = os.environ.get("PATH", os.defpath) if path is None else path
                for directory in str(os.fsdecode(search)).split(os.pathsep):
                    if directory:
                        self._note(os.path.join(directory, cmd))
        return found

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open" or event == "os.listdir" or event == "os.scandir":
            path = args[0] if args else None
            if event != "open" and path is None:
                path = "."
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if isinstance(path, str):
                self._note(path)
        elif event in OUTSIDE_EVENTS:
            self.refuse(f"{event} during the run")

    def _note(self, path: str) -> None:
        try:
            path = os.path.abspath(path)
        except (ValueError, OSError):
            return
        if path in self.files or path.startswith(_VOLATILE) or "__pycache__" in path or path.startswith(self.ignore):
            return
        self.files[path] = stamp(path)

    def refuse(self, reason: str) -> None:
        self.uncacheable.append(reason)

    def dependencies(self) -> list[tuple[str, Stamp]]:
        """Every recorded file and the source of every module imported outside the standard library."""
        stdlib = os.path.dirname(os.__file__) + os.sep
        for module in list(sys.modules.values()):
            source = getattr(module, "__file__", None)
            if isinstance(source, str) and not (source.startswith(stdlib) and "-packages" not in source):
                self._note(source)
        return sorted(self.files.items())


def refuse(reason: str) -> None:
    """Keep the current run out of the cache (a plugin failed; its answer may not last)."""
    if Recorder.current is not None and Recorder.current.active:
        Recorder.current.refuse(reason)
