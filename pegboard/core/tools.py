"""The ``Tool`` model, the ``@tool`` decorator and the context a tool runs with."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_type_hints

from pydantic import BaseModel

if TYPE_CHECKING:
    from pegboard.core.app import Pegboard
    from pegboard.core.config import LoadedConfig
    from pegboard.core.execution import ExecBackend
    from pegboard.core.session import Selection, Session
    from pegboard.core.state import Stash

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DEFAULT_MAX_RESULT_CHARS = 100_000


class ToolDefinitionError(ValueError):
    """A tool, group, profile or policy definition that cannot be registered."""


def name_key(name: str) -> str:
    """The lookup key of a tool name: case-insensitive, ignoring ``_`` and ``-``."""
    return name.replace("_", "").replace("-", "").casefold()


def validate_tool_name(name: str, what: str = "tool name") -> None:
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
        raise ToolDefinitionError(
            f"invalid {what} {name!r}: use 1-64 characters from A-Z, a-z, 0-9, '_' and '-' "
            "so that every provider accepts it"
        )


@dataclass(frozen=True)
class Subjects:
    """What one call touches, as its tool declares it (``Tool.permission_subjects``).

    The permission engine judges these with the rule grammars of the tool's family: paths
    read against ``Read(...)`` rules, paths written against ``Edit(...)`` rules (and the
    working directories), a command against ``Bash(...)`` rules, a URL against
    ``WebFetch(domain:...)`` rules (``urls``: several, each judged), a name against
    ``Tool(name)`` rules.
    """

    paths_read: Sequence[str] = ()
    paths_written: Sequence[str] = ()
    command: str | None = None
    url: str | None = None
    name: str | None = None
    urls: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "urls", tuple(self.urls))
        object.__setattr__(self, "paths_read", tuple(self.paths_read))
        object.__setattr__(self, "paths_written", tuple(self.paths_written))


class ToolPermissions:
    """``ctx.permissions``: the rule engine's answers for filtering what a tool returns
    (Grep and Glob never list a Read-denied file) and for checking other calls."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    def _engine(self) -> Any:
        pb = self._ctx._pegboard
        if pb is None:
            return None
        session = self._ctx.session
        return pb._permission_engine(
            cwd=self._ctx.cwd,
            mode=self._ctx.mode,
            additional_dirs=self._ctx.additional_dirs,
            session_rules=session.session_rules() if session is not None else None,
        )

    def may_read(self, path: str | Path) -> bool:
        """``False`` when a ``Read(...)`` deny rule covers ``path`` (the answer Read itself would get)."""
        engine = self._engine()
        return engine is None or engine.file_check("read", str(path)).decision != "deny"

    def may_list(self, path: str | Path) -> bool:
        """``False`` when a search must leave ``path`` out: ``may_read`` is ``False``, or the
        path is a file with several links that may be another name of a Read-denied file
        (the engine has more covered files than it compares)."""
        engine = self._engine()
        if engine is None:
            return True
        return self.may_read(path) and not engine.is_read_denied(str(path))

    def may_write(self, path: str | Path) -> bool:
        """``False`` when an ``Edit(...)`` deny rule covers ``path``."""
        engine = self._engine()
        return engine is None or engine.file_check("write", str(path)).decision != "deny"

    def check(self, tool: str, tool_input: Mapping[str, Any]) -> Any:
        """The ``PermissionDecision`` a call of ``tool`` with ``tool_input`` would get here."""
        pb = self._ctx._pegboard
        if pb is None:
            raise RuntimeError("ctx.permissions needs a context built by Pegboard")
        session = self._ctx.session
        if session is not None:
            return session.check(tool, tool_input)
        return pb.check(tool, tool_input, cwd=self._ctx.cwd, mode=self._ctx.mode,
                        additional_dirs=self._ctx.additional_dirs)


@dataclass
class ToolContext:
    """What a running tool may know and use: where, for whom, under which config, and the
    session's services (state slots, events, permissions, the visible tool set).

    ``call_rules`` are the ``Tool(specifier)`` entries of a subagent's ``tools`` /
    ``disallowedTools`` lists, which every call of that subagent must satisfy.
    ``requested_name`` is the name the call used (an alias, another spelling), ``tool``
    the registered name it resolved to.
    """

    cwd: Path = field(default_factory=Path.cwd)
    session_id: str | None = None
    tool_use_id: str | None = None
    agent: str | None = None
    subagent: str | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    mode: str = "default"
    additional_dirs: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    config: LoadedConfig | None = None
    call_rules: Mapping[str, Sequence[str]] = field(default_factory=dict)
    session: Session | None = None
    tool: str | None = None
    project_dir: Path | None = None
    requested_name: str | None = None
    _pegboard: Any = field(default=None, repr=False)

    def _for_call(self, tool_use_id: str | None) -> ToolContext:
        """A copy of this context for one call (``tool_use_id``), made without ``__init__``:
        the kernel keeps one per session as a template and copies it for every call."""
        ctx = object.__new__(type(self))
        ctx.__dict__.update(self.__dict__)
        ctx.tool_use_id = tool_use_id
        return ctx

    @property
    def selection(self) -> Selection:
        """Who is calling: agent, provider, model, profile, subagent."""
        from pegboard.core.session import Selection

        return Selection(
            agent=self.agent, provider=self.provider, model=self.model, profile=self.profile, subagent=self.subagent
        )

    @property
    def permissions(self) -> ToolPermissions:
        return ToolPermissions(self)

    @property
    def pegboard(self) -> Pegboard | None:
        """The ``Pegboard`` running this call (``None`` for a context built by hand)."""
        return cast("Pegboard | None", self._pegboard)

    @property
    def stash(self) -> Stash:
        """Per-``Pegboard`` storage for plugins (connections, managers), typed by ``StashKey``."""
        if self._pegboard is None:
            raise RuntimeError("ctx.stash needs a context built by Pegboard")
        stash: Stash = self._pegboard.stash
        return stash

    def settings(self, key: str) -> Any:
        """The validated settings of the config section ``key`` (see ``register_config_sections``)."""
        if self._pegboard is None:
            raise RuntimeError("ctx.settings needs a context built by Pegboard")
        return self._pegboard.settings(key)

    def emit(self, kind: str, data: Any = None) -> None:
        """Report an event (``progress`` with ``{"done", "total", "message"}``, ``log``, or your own)."""
        if self.session is not None:
            self.session.emit(kind, data, tool_use_id=self.tool_use_id, tool=self.tool)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        self.emit("progress", {"done": done, "total": total, "message": message})

    def enabled_tools(self) -> list[Tool]:
        """Every tool enabled for this caller (deferred ones included), subagent narrowing applied."""
        if self._pegboard is None:
            return []
        tools: list[Tool] = self._pegboard.enabled_tools(**self.selection.as_kwargs())
        return tools

    def visible_tools(self) -> list[Tool]:
        """The tools whose definitions go into the caller's next request."""
        enabled = self.enabled_tools()
        if self.session is None or self._pegboard is None:
            return enabled
        visible: list[Tool] = self._pegboard.deferred.visible(enabled, loaded=self.session.loaded_deferred())
        return visible

    async def exec_backend(self, default: ExecBackend | None = None) -> ExecBackend:
        """How this call starts processes: an ``exec_backend`` hook's answer, else ``default``
        (tools pass ``pegboard_toolkit``'s local backend). The kernel starts nothing itself."""
        pb = self._pegboard
        if pb is not None and pb.hooks.has("exec_backend"):
            errors: list[Any] = []
            backend = await pb.hooks.first("exec_backend", errors, context=self)
            if self.session is not None:
                for e in errors:
                    notice = f"plugin {e.plugin}: exec_backend failed: {e.error}"
                    if notice not in self.session.notices:
                        self.session.notices.append(notice)
            if backend is not None:
                return backend
        if default is None:
            raise RuntimeError("no exec_backend hook answered and no default backend was given")
        return default


ToolRun = Callable[[Any, ToolContext], Awaitable[Any]]
SpecifierMatcher = Callable[[str, Mapping[str, Any]], bool]
#: ``check()`` or ``check(pegboard)``: a reason the tool cannot run here, or ``None``
AvailabilityCheck = Callable[[], str | None] | Callable[[Any], str | None]
ResultNote = Callable[[str, int, int], str]


@dataclass(eq=False)
class Tool:
    """A tool an agent can call.

    ``run`` is ``async (input: input_model, ctx: ToolContext) -> ToolResult | str | dict``.
    ``permission_family`` names the rule family whose ``Family(specifier)`` rules apply
    (``Read`` for Grep and Glob, ``Edit`` for Write); ``None`` means the tool's own name.
    ``specifier_matcher(specifier, input)`` lets a third-party tool match its own specifiers.
    ``availability`` returns a reason when the tool cannot run here (missing binary or key).
    ``deferred`` tools are offered by name only until a tool with ``loads_deferred`` (a
    search) loads them for the session; see ``pegboard.core.deferred``. ``reads_results``
    marks the tool that pages through results cut to their size limit; its
    ``result_note(ref, limit, total)`` writes the note a cut result ends with.
    ``permission_subjects(input)`` returns the :class:`Subjects` a call touches (every path
    read or written, a command, a URL, a name); the permission engine judges those.
    ``path_fields`` name the input fields that hold paths: they are made absolute against
    the session's cwd before ``pre_tool_use`` hooks run, so hooks see absolute paths.
    ``engine()`` (or ``engine(pegboard)``) names the engine that backs the tool here (a
    language server, a model), for ``pegboard tools --explain``; it may return ``None``.
    ``asks_user`` marks a tool whose whole job is to ask the user: ``dontAsk`` mode denies
    it, as any prompt, unless an allow rule names it.
    ``enabled_by`` names, for an ``optional`` tool, the config key whose value ``true`` makes
    it a regular tool (``tools.exec.applyPatch.enabled``): read from the merged config, so the
    plugin need not be imported to know.
    ``server`` names the server a tool comes from (an MCP client sets it to the ``<server>``
    of ``mcp__<server>__<tool>``): the permission rule and the policy entry ``mcp__<server>``
    cover every tool that declares it, whatever the tool's name.
    """

    name: str
    description: str
    input_model: type[BaseModel]
    run: ToolRun
    groups: Sequence[str] = ()
    aliases: Sequence[str] = ()
    optional: bool = False
    enabled_by: str | None = None
    requires_permission: bool = False
    permission_family: str | None = None
    specifier_matcher: SpecifierMatcher | None = None
    availability: AvailabilityCheck | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    timeout: float | None = None
    usage: str = ""
    deferred: bool = False
    loads_deferred: bool = False
    reads_results: bool = False
    result_note: ResultNote | None = None
    title: str | None = None
    permission_subjects: Callable[[Any], Subjects] | None = None
    path_fields: Sequence[str] = ()
    server: str | None = None
    asks_user: bool = False
    engine: Callable[..., str | None] | None = None

    def __post_init__(self) -> None:
        validate_tool_name(self.name)
        if self.server is not None and (not isinstance(self.server, str) or not self.server):
            raise ToolDefinitionError(f"tool {self.name!r}: server must be a non-empty string or None")
        self.groups = tuple(self.groups)
        self.aliases = tuple(self.aliases)
        self.path_fields = tuple(self.path_fields)
        for alias in self.aliases:
            validate_tool_name(alias, f"alias of {self.name}")
        if not isinstance(self.description, str) or not self.description.strip():
            raise ToolDefinitionError(f"tool {self.name!r} needs a non-empty description")
        if not (isinstance(self.input_model, type) and issubclass(self.input_model, BaseModel)):
            raise ToolDefinitionError(
                f"tool {self.name!r}: input_model must be a pydantic BaseModel subclass, got {self.input_model!r}"
            )
        if not callable(self.run):
            raise ToolDefinitionError(f"tool {self.name!r}: run must be an async callable")
        if self.max_result_chars <= 0:
            raise ToolDefinitionError(f"tool {self.name!r}: max_result_chars must be positive")
        if self.timeout is not None and self.timeout <= 0:
            raise ToolDefinitionError(f"tool {self.name!r}: timeout must be positive or None")

    @property
    def family(self) -> str:
        """The permission-rule family this tool answers to."""
        return self.permission_family or self.name

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input model, as pydantic generates it."""
        return self.input_model.model_json_schema()

    def engine_report(self, pegboard: Any = None) -> str | None:
        """What ``engine()`` says, or ``None``; a check that raises is reported as such. An
        ``engine`` that takes an argument is given ``pegboard``, the instance asking."""
        if self.engine is None:
            return None
        try:
            found = self.engine(pegboard) if _takes_pegboard(self.engine) else self.engine()
            return None if found is None else str(found)
        except Exception as exc:
            return f"engine check failed: {type(exc).__name__}: {exc}"

    def unavailable_reason(self, pegboard: Any = None) -> str | None:
        """Why the tool cannot run here, or ``None``; a check that raises counts as unavailable.
        A check that takes an argument is given ``pegboard``, the instance asking."""
        if self.availability is None:
            return None
        return ask_availability(self.availability, pegboard)


def _takes_pegboard(check: Callable[..., Any]) -> bool:
    import inspect

    try:
        params = inspect.signature(check).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


def ask_availability(check: Callable[..., Any], pegboard: Any) -> str | None:
    """``check(pegboard)`` or ``check()``, whichever it takes; a check that raises counts as
    unavailable, with the error as the reason."""
    try:
        answer = check(pegboard) if _takes_pegboard(check) else check()
    except Exception as exc:
        return f"availability check failed: {type(exc).__name__}: {exc}"
    return None if answer is None else str(answer)


def unwrap_docstring(doc: str) -> str:
    """Join a docstring's hard-wrapped lines into paragraphs; blank lines, list items and
    indented lines keep their line breaks. Models read the description, not the source."""
    out: list[str] = []
    for line in doc.splitlines():
        joinable = out and out[-1].strip() and line.strip() and not line[:1].isspace()
        if joinable and not line.lstrip().startswith(("-", "*", "•")) and not line.lstrip()[:1].isdigit():
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line.rstrip())
    return "\n".join(out).strip()


def tool(
    name: str | None = None,
    *,
    description: str | None = None,
    **options: Any,
) -> Callable[[ToolRun], Tool]:
    """Make a ``Tool`` from an async function ``(input: Model, ctx: ToolContext)``.

    The input model is read from the first parameter's annotation and the description from
    the docstring unless given::

        class EchoInput(BaseModel):
            text: str

        @tool(name="Echo", groups=["demo"])
        async def echo(input: EchoInput, ctx: ToolContext) -> str:
            "Repeat the text back."
            return input.text
    """

    def wrap(fn: ToolRun) -> Tool:
        if not inspect.iscoroutinefunction(fn):
            raise ToolDefinitionError(f"@tool needs an async function, {fn!r} is not one")
        params = list(inspect.signature(fn).parameters.values())
        if not params:
            raise ToolDefinitionError(f"@tool function {fn.__name__} must take an input model")
        model = options.pop("input_model", None)
        if model is None:
            model = params[0].annotation
            if not isinstance(model, type):
                try:
                    model = get_type_hints(fn).get(params[0].name)
                except Exception as exc:
                    raise ToolDefinitionError(
                        f"@tool cannot resolve the input model annotation of {fn.__name__} ({exc}); "
                        "define the model at module level or pass input_model="
                    ) from None
        doc = description if description is not None else unwrap_docstring(inspect.getdoc(fn) or "")
        return Tool(
            name=name or fn.__name__,
            description=doc,
            input_model=model,
            run=fn,
            **options,
        )

    return wrap


@dataclass(frozen=True)
class Profile:
    """A named base allowlist of tool entries; ``allow=None`` means no restriction."""

    name: str
    allow: Sequence[str] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ToolDefinitionError(f"a profile needs a name, got {self.name!r}")
        if self.allow is not None:
            object.__setattr__(self, "allow", tuple(self.allow))
