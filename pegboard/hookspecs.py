"""The contract between Pegboard's kernel and its plugins: every hook a plugin may implement.

Implement a hook with ``@pegboard.hookimpl`` on a module or object that a ``pegboard``
entry point names (or that is passed as ``Pegboard(plugins=[obj])``). An implementation may
take any subset of the arguments, by name, and may return a value or an awaitable: the
kernel awaits what it gets. Hooks have no prefix.

Per-call hooks run one implementation at a time, in registration order, each in isolation:
an implementation that raises is reported in the call's result metadata (``hook_errors``)
and treated as "no opinion"; it never crashes the host.

A hook declared ``firstresult=True`` takes the first non-``None`` answer (later
implementations are not called); every other hook calls all implementations and uses every
answer. Hook wrappers (``hookwrapper=True`` or ``wrapper=True``) are refused: the plugin
fails to load with an error naming it and the hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pegboard.core.markers import hookspec

if TYPE_CHECKING:
    import click

    from pegboard.core.app import Pegboard
    from pegboard.core.call import ToolCall
    from pegboard.core.completion import CompletionRequest
    from pegboard.core.decisions import AnyHookDecision, HookDecision, PermissionDecision
    from pegboard.core.execution import ExecBackend
    from pegboard.core.hostservices import MessageDelivery, PlanDecision, PlanRequest, QuestionRequest, SubagentRequest
    from pegboard.core.registration import (
        ConfigSectionRegister,
        GroupRegister,
        PermissionFamilyRegister,
        ProfileRegister,
        ProviderPolicyRegister,
        ToolRegister,
    )
    from pegboard.core.results import ToolResult
    from pegboard.core.session import Session, SessionEvent
    from pegboard.core.store import SessionStore
    from pegboard.core.tools import ToolContext

__all__ = [
    "approve_plan",
    "ask_user",
    "check_permission",
    "complete",
    "deliver_message",
    "exec_backend",
    "on_event",
    "pegboard_close",
    "pegboard_ready",
    "permission_request",
    "post_tool_use",
    "post_tool_use_failure",
    "pre_tool_use",
    "register_commands",
    "register_config_sections",
    "register_groups",
    "register_permission_families",
    "register_profiles",
    "register_provider_policies",
    "register_tools",
    "request_approval",
    "run_subagent",
    "session_end",
    "session_opened",
    "session_start",
    "session_store",
]


# --------------------------------------------------------------------------- registration


@hookspec
def register_tools(register: ToolRegister) -> None:
    """Add tools.

    Called once for every plugin when a ``Pegboard`` is built. Call ``register(tool)`` with
    a :class:`pegboard.Tool` (the ``@tool`` decorator returns one) for each tool the plugin
    provides. The return value is ignored.

    A tool whose name or alias is already taken by another plugin (names compare without
    case, ``_`` and ``-``) is an error naming both plugins; the plugin registering second is
    marked ``failed`` and none of its registrations are kept.

    Example::

        @hookimpl
        def register_tools(register):
            register(echo)  # echo = @tool(name="Echo")(async def ...)
    """


@hookspec
def register_groups(register: GroupRegister) -> None:
    """Add tool groups, or members to existing groups.

    Called once for every plugin when a ``Pegboard`` is built. Call
    ``register(name, members, description="")`` where ``name`` is the bare group name
    (``fs``; config refers to it as ``group:fs``) and ``members`` a list of tool names.
    Several plugins may add members to one group; members merge. Tools also join the groups
    they declare in ``Tool.groups`` without this hook. The return value is ignored.

    Example::

        @hookimpl
        def register_groups(register):
            register("web", ["WebFetch", "WebSearch"], description="Web access")
    """


@hookspec
def register_profiles(register: ProfileRegister) -> None:
    """Add tool profiles (named base allowlists).

    Called once for every plugin when a ``Pegboard`` is built. Call
    ``register(Profile(name, allow=[...], description=""))``; ``allow=None`` means no
    restriction. Entries are tool names, aliases, ``*`` globs or ``group:<name>``; entries
    naming tools that are not installed are not an error. Two plugins registering the same
    profile name is an error naming both. The return value is ignored.

    Example::

        @hookimpl
        def register_profiles(register):
            register(Profile("reviewer", allow=["group:fs", "Grep"], description="Read and search"))
    """


@hookspec
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    """Add provider policies.

    Called once for every plugin when a ``Pegboard`` is built. Call
    ``register(ProviderPolicy(name, providers=[...], remove={...}, exclusive=[...],
    transform_schema=fn))``: tools it removes for those providers (with the reason), tools
    that exist only there, and a transform of the rendered tool definitions into the
    provider's accepted JSON-schema dialect. The return value is ignored.

    Example::

        @hookimpl
        def register_provider_policies(register):
            register(ProviderPolicy("acme", providers=["acme"], remove={"WebSearch": "no search on Acme"}))
    """


@hookspec
def register_permission_families(register: PermissionFamilyRegister) -> None:
    """Add permission families: how rules of a family (``Browser(origin:...)``) read and judge.

    Called once for every plugin when a ``Pegboard`` is built. Call ``register(family)`` with
    an object that has the :class:`pegboard.permissions.PermissionFamily` attributes (``name``,
    the rule head; ``asks``; ``fields``; ``tools``; ``file_rules``; ``borrows``) and methods
    (``parse`` a rule's specifier, ``compile`` a list's readings, ``judge`` a call). A family
    registered here replaces a default one of the same name for this ``Pegboard`` only. A
    distribution can instead declare it in entry-point group ``pegboard.permission_families``
    (name = the head, value = ``module:Class``), which imports it only when a rule or a call
    needs it. The return value is ignored. See docs/plugin-authors.md for a complete family.

    Example::

        @hookimpl
        def register_permission_families(register):
            register(OriginFamily())  # judges Browser(origin:https://example.com) rules
    """


@hookspec
def register_config_sections(register: ConfigSectionRegister) -> None:
    """Declare the settings your plugin reads, so they are typed, validated and trust-classed.

    Call ``register(ConfigSection(key, Model, description=...))``. ``key`` is the dotted
    place in the config (``tools.read``); ``Model`` a pydantic model of what may stand there
    (a wrong type is an error naming the file and key, an unknown key a warning). Every field
    declares, in its ``Annotated`` type, whether it can widen what an agent may do
    (``Widens.when_true/when_false/when_set(why)``: a switch that turns a check off, an allow
    list, a private host, an endpoint that receives data) or not (``NARROWS``, ``NEUTRAL``): an
    untrusted project's widening value is ignored, and so is its value for a key that declares
    nothing. Read the merged, validated value with ``pegboard.settings(key)`` or
    ``ctx.settings(key)``.

    Example::

        class FetchSettings(BaseModel):
            allowPrivateHosts: Annotated[list[str], Widens.when_set("lets fetches reach private hosts")] = []
            maxChars: Annotated[int, NEUTRAL] = 50_000

        @hookimpl
        def register_config_sections(register):
            register(ConfigSection("tools.web.fetch", FetchSettings))
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``pegboard`` command line.

    Called when a command that is not built in is looked up (``pegboard --help`` imports no
    plugin). ``cli`` is the top-level ``click.Group``; add commands with ``cli.command()``
    or ``cli.add_command(cmd)``. The return value is ignored.

    Example::

        @hookimpl
        def register_commands(cli):
            @cli.command()
            def hello():
                click.echo("hello")
    """


@hookspec
def pegboard_ready(pegboard: Pegboard) -> None:
    """A ``Pegboard`` finished loading every plugin; start what needs its config and cwd.

    Called once per ``Pegboard`` instance, after all registration hooks ran. Plugins whose
    tools are only known at run time (an MCP client connecting to servers) start here and
    keep their tools in step with ``pegboard.add_tool_source(sync)``, ``pegboard.add_tool``
    and ``pegboard.remove_tools``. The return value is ignored; an implementation that
    raises is reported in ``pegboard.warnings``.

    Example::

        @hookimpl
        def pegboard_ready(pegboard):
            watcher = Watcher(pegboard.config, pegboard.cwd)
            pegboard.add_tool_source(watcher.sync)
    """


@hookspec
def pegboard_close(pegboard: Pegboard) -> None:
    """A ``Pegboard`` is closing (``await pb.aclose()`` or ``async with Pegboard()``).

    Every open session was closed first. Stop what ``pegboard_ready`` started (connections,
    subprocesses) and drop what you kept in ``pegboard.stash``. May be async. The return
    value is ignored; an implementation that raises is reported in ``pegboard.warnings``.

    Example::

        @hookimpl
        async def pegboard_close(pegboard):
            manager = pegboard.stash.pop(MANAGER, None)
            if manager is not None:
                await manager.stop()
    """


@hookspec(firstresult=True)
def session_store(pegboard: Pegboard) -> SessionStore | None:
    """Supply the store sessions live in (first answer wins); default: SQLite in the data dir.

    Asked once, when a ``Pegboard`` first needs its store (never for listing tools). Return
    an object that implements :class:`pegboard.SessionStore`; run
    ``pegboard.testing.SessionStoreContract`` against it in your tests. Several
    ``pegboard serve`` replicas share sessions through a store backed by a database server.

    Example::

        @hookimpl
        def session_store(pegboard):
            return PostgresSessionStore(pegboard.config.model_extra["postgres"]["dsn"])
    """


@hookspec
def on_event(event: SessionEvent, session: Session) -> None:
    """See every session event: ``call_started``, ``call_finished``, ``progress``, ``log``
    and the kinds tools emit with ``ctx.emit`` (``task_output``, ``tasks_changed`` ...).

    Called synchronously in the emitting thread: keep it quick (hand the event to a queue
    for slow work). For logging, tracing and UIs. The return value is ignored; an
    implementation that raises is ignored too, it never reaches the tool. Mark an
    implementation with ``@event_kinds("progress", ...)`` to hear only those kinds.

    Example::

        @hookimpl
        def on_event(event, session):
            log.info("%s %s %s", session.id, event.kind, event.data)
    """


@hookspec(firstresult=True)
def exec_backend(context: ToolContext) -> ExecBackend | None:
    """Supply the backend that starts a call's processes (first answer wins).

    Asked by ``await ctx.exec_backend()`` each time a tool is about to start a process
    (Bash, exec, Monitor, background tasks); ``context`` says for which call. Return an
    object implementing :class:`pegboard.ExecBackend`, or ``None`` to leave the choice to
    the next plugin and finally to the local backend of ``pegboard-toolkit``. A sandbox or
    container backend usually wraps the local one and rewrites ``argv``.

    Example::

        @hookimpl
        def exec_backend(context):
            if context.config and context.config.data.get("sandbox", {}).get("enabled"):
                return BubblewrapBackend(LocalBackend(), context)
    """


@hookspec(firstresult=True)
def complete(request: CompletionRequest, context: ToolContext) -> str | None:
    """Answer a small-model job: run ``request.prompt`` over ``request.text`` (first answer wins).

    Tools ask through ``await pegboard.request_completion(ctx, request)`` (WebFetch's
    extraction prompt, summaries, image descriptions). ``request.purpose`` says what for;
    ``request.max_chars`` is the answer's budget (a longer answer is cut). Return the text,
    an awaitable of it, or ``None`` to let the next implementation answer. With none, the tool
    goes without a model and says so. The text may be untrusted page content: send it only
    to endpoints the user configured.

    Example::

        @hookimpl
        async def complete(request, context):
            return await my_model.ask(f"{request.prompt}\n\n{request.text}", limit=request.max_chars)
    """


@hookspec(firstresult=True)
def ask_user(request: QuestionRequest, context: ToolContext) -> dict[str, Any] | None:
    """Ask the user ``request.questions`` and return the answers (first answer wins).

    Used by ``AskUserQuestion``. Each question has a ``header``, 2-4 ``options`` (label and
    description) and ``multi_select``; the user may also answer in their own words. Return
    a dict from question text to the chosen label (a list of labels for multi-select) or
    free text, an awaitable of it, or ``None`` to pass. While the user chooses, record
    choices in ``request.partial`` and call ``request.touch()`` on input: when
    ``request.timeout`` is set and the user stays idle that long, the tool continues with
    ``request.partial`` and tells the model the user may be away. Without an implementation
    ``AskUserQuestion`` is listed unavailable.

    Example::

        @hookimpl
        def ask_user(request):
            return {q.question: input(f"{q.header}: {q.question} ") for q in request.questions}
    """


@hookspec(firstresult=True)
def approve_plan(request: PlanRequest, context: ToolContext) -> PlanDecision | bool | None:
    """Show the user ``request.plan`` and return whether they approve it (first answer wins).

    Used by ``ExitPlanMode``. Return ``True`` / ``False`` or a
    :class:`pegboard.PlanDecision` (``approved``, ``mode`` to switch to instead of
    ``request.previous_mode``, ``feedback`` for the model), or ``None`` to pass. A refusal
    keeps the session in plan mode. Plan approval never resolves on a timeout. Without an
    implementation ``ExitPlanMode`` is listed unavailable.

    Example::

        @hookimpl
        def approve_plan(request):
            print(request.plan)
            return PlanDecision(approved=input("Approve? [y/N] ") == "y", mode="acceptEdits")
    """


@hookspec(firstresult=True)
def run_subagent(request: SubagentRequest, context: ToolContext) -> str | None:
    """Run a subagent to its end and return its final text (first answer wins).

    Used by ``Agent`` (``Task``), ``sessions_spawn`` and ``delegate_task``.
    ``request.subagent_type`` names the definition, ``request.prompt`` the task,
    ``request.tools`` the tool names the policy allows it (give the model exactly these;
    open its session with ``pegboard.session(**request.session_options())`` so its calls are
    judged as the subagent's and its permission asks reach the parent session's approver,
    named by the subagent), ``request.max_turns`` the turn limit and ``request.model`` the
    model (``None``: the host's choice). ``request.background`` is true when the caller did
    not wait (``run_in_background``, ``sessions_spawn``, ``background_job``): the run is then a
    background task of the parent session that ``TaskOutput`` reads and ``TaskStop``
    cancels. Return the final text, an awaitable of it, or ``None`` to pass. Without an
    implementation these tools are unavailable.

    Example::

        @hookimpl
        async def run_subagent(request, context):
            async with pb.session(**request.session_options()) as session:
                return await my_loop.run(session, request.prompt, tools=request.tools,
                                         max_turns=request.max_turns)
    """


@hookspec(firstresult=True)
def deliver_message(request: MessageDelivery, context: ToolContext) -> str | bool | None:
    """Deliver ``request.text`` to session ``request.session_id`` (first answer wins).

    Used by ``SendMessage`` and ``sessions_send``, by ``sessions_spawn`` and background
    agents when they finish, and by schedules that wake a session. ``request.kind`` is
    ``message`` (from another agent: never an approval), ``reply`` (a ping-pong turn of
    ``sessions_send``: answer it, or answer ``REPLY_SKIP`` to end the exchange),
    ``announce_step`` (the target's turn to announce the exchange: answer the announcement,
    or ``ANNOUNCE_SKIP``), ``announce`` (a result to show in that session's conversation),
    ``task_notification`` (a background agent ended) or ``prompt`` (a scheduled prompt);
    ``request.wait`` is how many seconds the sender waits for a reply. Return the reply
    text, ``True`` (delivered, no reply), ``False`` (not delivered), or ``None`` to pass.
    Without an implementation these tools are unavailable.

    Example::

        @hookimpl
        async def deliver_message(request):
            return await inboxes[request.session_id].put(request.text, wait=request.wait)
    """


# --------------------------------------------------------------------------- per call


@hookspec
def pre_tool_use(call: ToolCall, context: ToolContext) -> AnyHookDecision | None:
    """Inspect, rewrite or block a call before permission rules are checked.

    Called for every call after its input validated, in registration order. Return ``None``
    for no opinion, or a :class:`pegboard.PreToolUseDecision` (a ``HookDecision`` or a dict
    with its fields also work; an ``updated_output`` there is reported in ``hook_errors``
    and not applied, since there is no output yet):

    - ``decision="deny"`` blocks the call (reason ``hook_blocked``), in every mode;
    - ``decision="ask"`` makes the call ask for approval;
    - ``decision="allow"`` approves it unless a deny or ask rule matches or the ask is
      hard (``PermissionDecision.hard``: protected paths, critical ``rm``, commands that
      cannot be analysed, plan-mode edits), which only a person may approve;
    - ``decision="defer"`` hands the call back to the host unrun;
    - ``updated_input`` replaces the input; it is validated against the tool's model again
      and later hooks see it; permission rules are checked against it;
    - ``additional_context`` is added to the result's metadata for the model.

    Decisions of several implementations combine deny > defer > ask > allow.

    Example::

        @hookimpl
        def pre_tool_use(call):
            if call.name == "Bash" and "rm -rf /" in call.input["command"]:
                return PreToolUseDecision(decision="deny", reason="refusing to wipe the disk")
    """


@hookspec
def check_permission(call: ToolCall, context: ToolContext) -> PermissionDecision | None:
    """Add a permission opinion of your own to the rule engine's.

    Called for every call after ``pre_tool_use``. Return ``None`` for no opinion or a
    :class:`pegboard.PermissionDecision`. All opinions, the rule engine's included, combine
    deny > ask > allow, so a plugin can tighten but never loosen what rules decided.

    Example::

        @hookimpl
        def check_permission(call):
            if call.name == "WebFetch" and "internal" in call.input.get("url", ""):
                return PermissionDecision(decision="deny", reason="no internal URLs")
    """


@hookspec
def permission_request(
    call: ToolCall, decision: PermissionDecision, context: ToolContext
) -> AnyHookDecision | None:
    """React to a call that would ask for approval, before the host is asked.

    Called when the combined decision is ``ask``. Return ``None`` for no opinion, or a
    :class:`pegboard.PreToolUseDecision` with ``decision="allow"`` (approve without asking) or
    ``"deny"`` (refuse, reason ``denied``); ``updated_input`` applies as in ``pre_tool_use``.
    An allow does not settle a hard ask (``decision.hard``); that goes on to
    ``request_approval``, and the result's ``hook_notices`` say so.

    Example::

        @hookimpl
        def permission_request(call):
            if call.name == "Read":
                return PreToolUseDecision(decision="allow", reason="reads are fine here")
    """


@hookspec(firstresult=True)
def request_approval(call: ToolCall, decision: PermissionDecision, context: ToolContext) -> bool | None:
    """The host's answer to an "ask": ``True`` approves, ``False`` refuses, ``None`` passes.

    Called when a call needs approval and no ``permission_request`` hook settled it. The
    first implementation returning a non-``None`` value wins. With no answer the call is
    refused with reason ``not_approved`` and a message naming the rule and how to allow it.

    Example::

        @hookimpl
        def request_approval(call, decision):
            return input(f"Run {call.name}? [y/N] ").lower() == "y"
    """


@hookspec
def post_tool_use(call: ToolCall, result: ToolResult, context: ToolContext) -> AnyHookDecision | ToolResult | None:
    """Inspect or replace a tool's result.

    Called after the tool returned (also when it returned an error result), in registration
    order. Return ``None``, a replacement :class:`pegboard.ToolResult` (later hooks see it),
    or a :class:`pegboard.PostToolUseDecision` whose ``updated_output`` replaces the result,
    ``decision="deny"`` marks the result as blocked with ``reason`` shown to the model, and
    ``additional_context`` is appended for the model. (A ``HookDecision`` also works; an
    ``updated_input`` there is reported in ``hook_errors``: the input was used already.)

    Example::

        @hookimpl
        def post_tool_use(call, result):
            if call.name == "Write":
                return PostToolUseDecision(additional_context="remember to run the formatter")
    """


@hookspec
def post_tool_use_failure(call: ToolCall, error: BaseException, context: ToolContext) -> AnyHookDecision | None:
    """Observe a tool that raised or timed out.

    Called after the tool's exception was turned into an error result (reason
    ``tool_error`` or ``timeout``). Return ``None`` or a :class:`pegboard.PostToolUseDecision`
    whose ``additional_context`` is added to the error result.

    Example::

        @hookimpl
        def post_tool_use_failure(call, error):
            log.warning("%s failed: %s", call.name, error)
    """


# --------------------------------------------------------------------------- session events


@hookspec
def session_start(session_id: str, source: str, context: ToolContext) -> HookDecision | None:
    """A session started; the host fires it with ``Pegboard.fire("session_start", ...)``.

    ``source`` says why (``startup``, ``resume``, ``clear``). Return ``None`` or a
    :class:`pegboard.HookDecision` whose ``additional_context`` the host may add to the
    model's context. ``fire`` returns every answer.

    Example::

        @hookimpl
        def session_start(session_id):
            return HookDecision(additional_context=f"session {session_id} started")
    """


@hookspec
def session_opened(session: Session) -> None:
    """A session was opened with ``Pegboard.session`` (new, or resumed: ``session.resumed``).

    Called before ``session()`` returns, in the caller's thread (inside its event loop when it
    has one). Start per-session work here, such as a scheduler watching the session's jobs,
    and stop it from a ``session.on_close(callback)``. Keep it quick; the return value is
    ignored and an implementation that raises is reported in ``session.notices``.

    Example::

        @hookimpl
        def session_opened(session):
            watcher.watch(session)
            session.on_close(lambda: watcher.forget(session))
    """


@hookspec
def session_end(session_id: str, reason: str, context: ToolContext) -> None:
    """A session ended; the host fires it with ``Pegboard.fire("session_end", ...)``.

    ``reason`` says why (``exit``, ``clear``, ``logout``, ``other``). The return value is
    ignored; use it to clean up.

    Example::

        @hookimpl
        def session_end(session_id):
            cache.pop(session_id, None)
    """
