"""Config files watched while Pegboard runs: a change applies to the next call.

``pegboard serve`` runs for hours, and a deny rule added to a settings file must not wait
for a restart. The watcher polls every file a config layer is read from, and every file
that would be read if it were created (a new ``.pegboard/settings.local.json``), by
``(mtime_ns, size, inode)``: no thread and no library, and a test drives it with a clock of
its own. A change goes through the start-up path (:meth:`Pegboard.reload_config`), so an
untrusted project's widening keys stay refused. A file that does not parse or validate
never falls open: the last content of that file that loaded stays in force (its deny rules
too), it is read again on every poll, and its problem is reported once.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegboard.core.config import (
    ConfigError,
    ConfigLayer,
    ConfigSource,
    config_sources,
    layers_of,
    read_config_file,
)
from pegboard.core.sections import Direction, Widening, get_path, kernel_declarations, spellings, widening_table

if TYPE_CHECKING:
    from pegboard.core.app import Pegboard
    from pegboard.core.sections import SectionEntry

#: Seconds between two polls unless the host says otherwise.
DEFAULT_INTERVAL = 1.0

Fingerprint = tuple[int, int, int]


def fingerprint(path: Path) -> Fingerprint | None:
    """``(mtime_ns, size, inode)`` of a regular file; ``None`` when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


@dataclass(frozen=True)
class ConfigChange:
    """What one poll found.

    ``applied``: the files whose change is in force from the next call. ``widened``: each
    change that lets an agent do more, naming its file. ``notices``: config warnings that
    are new (an unknown key, a key an untrusted project may not set). ``problems``: files
    that do not load, each reported once; the last content that loaded stays in force.
    """

    applied: tuple[Path, ...] = ()
    widened: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


class ConfigWatcher:
    """Polls the config files of one ``Pegboard`` and puts their changes in force.

    Call :meth:`check` as often as convenient (it polls at most once per ``interval`` of
    ``clock``), or :meth:`poll` to look now. Both return ``None`` when there is nothing new.
    A ``Pegboard`` built from ``layers=`` has no files to watch (:attr:`watching` is false).
    """

    def __init__(
        self, pegboard: Pegboard, *, interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.pegboard = pegboard
        self.interval = interval
        self.clock = clock
        self._last = clock()
        #: the fingerprint each file had when last read; empty, so the first poll reads every
        #: file and catches a change made while the Pegboard was loading
        self._seen: dict[Path, Fingerprint | None] = {}
        #: per file, the last content that loaded (what is in force)
        self._good: dict[Path, Mapping[str, Any]] = {
            ly.path: ly.data for ly in pegboard._source_layers if ly.path is not None and ly.scope != "default"
        }
        #: files that do not load, with the problem reported
        self._broken: dict[Path, str] = {}
        #: files found emptied, held for one poll (an editor truncates, then writes)
        self._held: dict[Path, Fingerprint] = {}

    @property
    def watching(self) -> bool:
        return self.pegboard._config_files is not None

    def sources(self) -> list[ConfigSource]:
        """Every file the config may be read from now, whether it exists or not."""
        pb = self.pegboard
        return config_sources(pb.cwd.resolve(), pb._config_files or [], env=pb.env)

    def check(self) -> ConfigChange | None:
        """:meth:`poll` if ``interval`` has passed since the last poll."""
        if self.clock() - self._last < self.interval:
            return None
        return self.poll()

    def poll(self) -> ConfigChange | None:
        """Look at every file now; put a change in force; ``None`` when nothing is new."""
        from pegboard.core.projecttrust import trust_file

        self._last = self.clock()
        if not self.watching:
            return None
        pb = self.pegboard
        sources = self.sources()
        trust = trust_file(pb.env)
        trust_print = fingerprint(trust)
        trust_changed = self._seen.get(trust, -1) != trust_print
        self._seen[trust] = trust_print
        problems: list[str] = []
        reads = self._read(sources, problems)
        known = {s.path for s in sources}
        if not reads and not trust_changed and self._good.keys() <= known:
            return ConfigChange(problems=tuple(problems)) if problems else None
        wanted = {p: d for p, d in self._with(self._good, reads).items() if p in known}
        if _same(self._layers(sources, wanted), pb._source_layers):  # touched, or saved unchanged
            self._good = wanted
            for path in reads:
                self._broken.pop(path, None)
            return ConfigChange(problems=tuple(problems)) if problems else None
        before = {ly.path: ly.data for ly in pb.layers if ly.path is not None}
        before_warnings = set(pb._config_warnings)
        applied = self._apply(sources, reads, wanted, problems)
        after = {ly.path: ly.data for ly in pb.layers if ly.path is not None}
        if applied is None:
            return ConfigChange(problems=tuple(problems)) if problems else None
        if trust_changed and before != after and not applied:
            applied.append(trust)
        sections = list(pb.registry.config_sections.values())
        table, narrowing = widening_table(sections), narrowing_keys(sections)
        widened = [
            f"{path}: {change}"
            for path in dict.fromkeys([*before, *after])
            for change in widening_changes(before.get(path, {}), after.get(path, {}), table, narrowing)
        ]
        notices = [w for w in pb._config_warnings if w not in before_warnings]
        return ConfigChange(tuple(applied), tuple(widened), tuple(notices), tuple(problems))

    def _read(self, sources: Sequence[ConfigSource], problems: list[str]) -> dict[Path, Mapping[str, Any] | None]:
        """The files changed since the last poll (and those that did not load then), read and
        validated on their own; ``None`` for a file that is gone."""
        reads: dict[Path, Mapping[str, Any] | None] = {}
        for source in sources:
            path = source.path
            now = fingerprint(path)
            if path in self._seen and self._seen[path] == now and path not in self._broken:
                continue
            if now is None and not source.required:
                reads[path] = None
            elif now is not None and now[1] == 0 and self._good.get(path) and self._held.get(path) != now:
                self._held[path] = now  # read it at the next poll, unless it is being written
                continue
            else:
                try:
                    data = read_config_file(path)
                    ConfigLayer(source.scope, data, path, source.root).model  # noqa: B018 (validates)
                except ConfigError as exc:
                    self._seen[path] = now
                    self._report(path, str(exc), problems)
                    continue
                reads[path] = data
            self._seen[path] = now
            self._held.pop(path, None)
        return reads

    def _layers(self, sources: Sequence[ConfigSource], good: Mapping[Path, Mapping[str, Any]]) -> list[ConfigLayer]:
        return layers_of([(s, good[s.path]) for s in sources if s.path in good], self.pegboard.env)

    def _apply(
        self,
        sources: Sequence[ConfigSource],
        reads: Mapping[Path, Mapping[str, Any] | None],
        wanted: dict[Path, Mapping[str, Any]],
        problems: list[str],
    ) -> list[Path] | None:
        """Put ``wanted`` in force, all at once when it loads, else file by file (a file that
        does not load keeps its last good content). The files applied; ``None``: none was."""
        changed = [p for p in reads if reads[p] != self._good.get(p)]
        failed = self._reload(sources, wanted)
        if failed is None:
            self._good = wanted
            for path in reads:
                self._broken.pop(path, None)
            return changed
        if len(changed) <= 1:
            self._report(changed[0] if changed else None, failed, problems)
            return None
        applied = []
        for path in changed:
            trial = self._with(self._good, {path: reads[path]})
            failed = self._reload(sources, trial)
            if failed is not None:
                self._report(path, failed, problems)
                continue
            self._good = trial
            self._broken.pop(path, None)
            applied.append(path)
        return applied or None

    def _reload(self, sources: Sequence[ConfigSource], good: Mapping[Path, Mapping[str, Any]]) -> str | None:
        """Put these contents in force; why not, when they do not load (nothing changes then)."""
        try:
            self.pegboard.reload_config(self._layers(sources, good))
        except ConfigError as exc:
            return str(exc)
        except Exception as exc:  # a plugin's section model that raised: the config in force stays
            return f"{type(exc).__name__}: {exc}"
        return None

    @staticmethod
    def _with(
        good: Mapping[Path, Mapping[str, Any]], reads: Mapping[Path, Mapping[str, Any] | None]
    ) -> dict[Path, Mapping[str, Any]]:
        out = dict(good)
        for path, data in reads.items():
            if data is None:
                out.pop(path, None)
            else:
                out[path] = data
        return out

    def _report(self, path: Path | None, problem: str, problems: list[str]) -> None:
        """Note a file that does not load; report it once per distinct problem."""
        if path is None:  # the files together (after a trust change): nothing changes
            problems.append(f"the changed config does not load, the config in force stays: {problem}")
            return
        text = problem if str(path) in problem else f"{path}: {problem}"
        if self._broken.get(path) != text:
            problems.append(f"{text} (the last content of this file that loaded stays in force)")
        self._broken[path] = text


def _same(layers: Sequence[ConfigLayer], others: Sequence[ConfigLayer]) -> bool:
    """Do two layer lists say the same (scope, file, content, trust)?"""
    def key(ly: ConfigLayer) -> tuple[Any, ...]:
        return ly.scope, ly.path, ly.trusted, json.dumps(ly.data, sort_keys=True, default=str)

    return [key(ly) for ly in layers] == [key(ly) for ly in others]


def _value(data: Mapping[str, Any], key: str) -> Any:
    for spelling in spellings(key):
        found = get_path(data, spelling)
        if found is not None:
            return found
    return None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _shown(value: Any) -> str:
    return json.dumps(value, default=str)[:80]


def narrowing_keys(sections: Iterable[SectionEntry] = ()) -> list[str]:
    """Every key declared as narrowing (``permissions.deny``, ``tools.deny``, a plugin's
    denied-domains list), the kernel's first: taking something out of one widens."""
    found: list[str] = []
    for declared in (kernel_declarations(), *(s.declarations() for s in sections)):
        found += [path for path, mark in declared.items() if mark is not None and mark.direction is Direction.NARROWS]
    return found


def widening_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], table: Mapping[str, Widening], narrowing: Sequence[str] = ()
) -> list[str]:
    """What in ``new`` lets an agent do more than ``old`` did (two versions of one file): an
    entry gone from a narrowing key, a narrowing value changed, an entry added to a widening
    list, a widening key set or changed. ``table`` is the widening keys (``widening_table``);
    ``narrowing`` the narrowing ones (:func:`narrowing_keys`)."""
    out: list[str] = []
    for key in narrowing:
        before, after = _value(old, key), _value(new, key)
        if before is None or before == after:
            continue
        if isinstance(before, list):
            kept = _items(after)
            out += [f"{key} no longer holds {_shown(item)}" for item in before if item not in kept]
        elif isinstance(before, Mapping):  # named entries (subagents, byProvider): each one narrows
            now = after if isinstance(after, Mapping) else {}
            out += [f"{key}.{name} {'changed' if name in now else 'removed'}" for name in before
                    if now.get(name) != before[name]]
        else:
            out.append(f"{key} was {_shown(before)}, now {_shown(after) if after is not None else 'unset'}")
    for key, why in table.items():
        before, after = _value(old, key), _value(new, key)
        if before == after or after is None:
            continue
        if isinstance(after, list):
            for item in after:
                if item not in _items(before) and (reason := why(item) if callable(why) else why):
                    out.append(f"{key} gained {_shown(item)}: {reason}")
        elif (reason := why(after) if callable(why) else why) is not None:
            out.append(f"{key} = {_shown(after)}: {reason}")
    return out


__all__ = ["DEFAULT_INTERVAL", "ConfigChange", "ConfigWatcher", "fingerprint", "narrowing_keys", "widening_changes"]
