"""One tool call, in order: the eight steps of the kernel contract, top to bottom.

1. resolve the name within the agent's effective tool set
2. validate the input against the tool's model
3. ``pre_tool_use`` hooks (updated input is validated again)
4. permission: rule engine and ``check_permission`` hooks, combined with hook decisions
5. "ask": ``permission_request`` hooks, then ``request_approval`` (or the caller's approver)
6. run, with the tool's time limit; an exception becomes an error result
7. ``post_tool_use`` hooks
8. project the result: redact, cut to the size limit, keep the whole under a reference;
   whatever the call returns, refusals included, leaves with its text and metadata redacted

Every refusal is a ``ToolResult`` with a stable reason code; nothing raises out of here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from pegboard.core.call import Approver, ToolCall
from pegboard.core.deadlines import Deadlines
from pegboard.core.decisions import (
    HookDecision,
    PermissionDecision,
    PostToolUseDecision,
    PreToolUseDecision,
    strongest_hook_decision,
    strongest_permission,
)
from pegboard.core.hookrunner import HookError, HookRunner
from pegboard.core.nullables import null_plan, omit_nulls
from pegboard.core.pathnames import CALL_PATHS, CallPaths, resolve_text
from pegboard.core.projection import ResultSink, project, redact_outgoing
from pegboard.core.results import Reason, TextBlock, ToolResult, coerce_result
from pegboard.core.session import PermissionUpdate
from pegboard.core.tools import Tool, ToolContext
from pegboard.core.wirenames import wire_location

if TYPE_CHECKING:
    from pegboard.core.authorizer import Authorizer
    from pegboard.core.plugins import PluginInfo
    from pegboard.core.registry import Registry, ToolEntry

#: the hooks that receive a call's input and so could change it in place
INPUT_HOOKS = ("pre_tool_use", "check_permission", "permission_request", "request_approval")
#: hooks that answer before the tool ran (no output to replace) and after it (input used)
BEFORE_RUN_HOOKS = ("pre_tool_use", "permission_request")
AFTER_RUN_HOOKS = ("post_tool_use", "post_tool_use_failure")


class CallRefused(Exception):
    """Internal: a step refused the call; carries the result to return."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result


@dataclass(slots=True)
class CallState:
    """What the steps learn about one call, reported in the result's metadata."""

    hook_errors: list[HookError] = field(default_factory=list)
    original_input: dict[str, Any] | None = None
    #: the validated input after the pre_tool_use hooks (what the tool will get)
    model: BaseModel | None = None
    additional_context: list[str] = field(default_factory=list)
    system_messages: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    hook_decision: HookDecision | None = None
    permission: PermissionDecision | None = None
    #: results a tool or hook handed over (maybe kept and reused by it): never changed in place
    foreign: list[object] = field(default_factory=list)


def describe_validation_error(tool: Tool, exc: ValidationError) -> str:
    """One line per invalid field: where (by the names the schema shows), what was wrong."""
    lines = [f"Invalid input for {tool.name}:"]
    for err in exc.errors():
        loc = ".".join(wire_location(tool.input_model, err["loc"])) or "(input)"
        lines.append(f"- {loc}: {err['msg']}")
    fields = ", ".join(
        f"{info.alias or name}{'' if info.is_required() else '?'}"
        for name, info in tool.input_model.model_fields.items()
    )
    lines.append(f"Expected fields: {fields or '(none)'}")
    return "\n".join(lines)


def drop_null_optionals(tool: Tool, raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """Treat ``null`` for an optional field as "not given", at any depth (see ``nullables``)."""
    return omit_nulls(null_plan(tool), raw)


def _invalid(message: str) -> ToolResult:
    """An input refusal; ``error_kind`` repeats the reason for hosts that branch on the kind."""
    return ToolResult.refusal(Reason.INVALID_INPUT, message, error_kind=Reason.INVALID_INPUT.value)


def validate_input(tool: Tool, raw: Any) -> BaseModel:
    if type(raw) is dict and None not in raw.values() and null_plan(tool).flat:  # nothing to parse or drop
        return _validated(tool, raw)
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise CallRefused(
                _invalid( f"Input for {tool.name} is not valid JSON: {exc}")
            ) from None
    if raw is None:
        raw = {}
    if isinstance(raw, Mapping):
        raw = drop_null_optionals(tool, raw)
    if not isinstance(raw, Mapping):
        raise CallRefused(
            _invalid(
                f"Input for {tool.name} must be a JSON object, got {type(raw).__name__}",
            )
        )
    return _validated(tool, dict(raw))


def _validated(tool: Tool, data: dict[str, Any]) -> BaseModel:
    try:
        return tool.input_model.model_validate(data)
    except ValidationError as exc:
        raise CallRefused(_invalid( describe_validation_error(tool, exc))) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise CallRefused(
            _invalid( f"Input for {tool.name} cannot be validated: {exc}")
        ) from None


def dump_input(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude_unset=True)


def absolutize_paths(tool: Tool, model: BaseModel, ctx: ToolContext) -> BaseModel:
    """Make the tool's declared path fields absolute against the session's cwd, so hooks and
    rules see the file the call means (``~``, ``~user``, relative names, ``..``)."""
    if not tool.path_fields:
        return model
    changes: dict[str, Any] = {}
    for name in tool.path_fields:
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            try:
                resolved = resolve_text(value, ctx.cwd, home=ctx.env.get("HOME"))
            except ValueError:
                continue
            if resolved != value:
                changes[name] = resolved
    if not changes:
        return model
    try:
        return tool.input_model.model_validate({**dump_input(model), **changes})
    except ValidationError:
        return model


class CallPipeline:
    """Runs calls against one tool set; see the module docstring for the steps.

    It gets what the steps need, not the whole ``Pegboard``: the registry, the hook runner,
    the ``Authorizer``, why a not-yet-registered name may come (``pending_reason``), the
    plugins (to name the ones that failed), the time limit of tools that set none, the secret
    values to redact and where results of calls without a session are kept.
    """

    def __init__(
        self,
        *,
        registry: Registry,
        hooks: HookRunner,
        authorizer: Authorizer,
        pending_reason: Callable[[str], str | None],
        plugins: Sequence[PluginInfo],
        default_timeout: float,
        secrets: Sequence[str],
        fallback_results: Callable[[], ResultSink],
    ) -> None:
        self.registry = registry
        self.hooks = hooks
        self.authorizer = authorizer
        self.pending_reason = pending_reason
        self.plugins = plugins
        self.default_timeout = default_timeout
        self.secrets = list(secrets)
        self.fallback_results = fallback_results
        self._readers: tuple[int, list[ToolEntry]] = (-1, [])
        self._reader: tuple[int, set[str] | None, ToolEntry | None] = (-1, None, None)
        self.deadlines = Deadlines()

    async def run(
        self,
        name: str,
        raw_input: Any,
        context: ToolContext,
        *,
        enabled: set[str] | None = None,
        approver: Approver | None = None,
        disabled: Mapping[str, str] | None = None,
        availability: tuple[Tool, str | None] | None = None,
    ) -> ToolResult:
        """Run one call. ``availability`` is a tool and the answer its check just gave, which
        the caller may pass so the check does not run twice."""
        state = CallState()
        projected = False
        paths: CallPaths | None = None
        scope: Any = None
        try:
            session = context.session
            if session is not None:
                session.current_run = context.tool_use_id or f"run-{id(state):x}"
                if session.has_listeners("call_started"):
                    session.emit("call_started", {"name": name}, tool_use_id=context.tool_use_id, tool=name)
            try:
                tool = self.resolve(name, enabled, disabled or {}, availability)
                if tool.path_fields or tool.permission_subjects is not None:
                    paths = CallPaths()  # each existing path is resolved once in this call
                    scope = CALL_PATHS.set(paths)
                context.tool = tool.name
                context.requested_name = name
                model = validate_input(tool, raw_input)
                model = absolutize_paths(tool, model, context)
                call = ToolCall(tool, dump_input(model), requested_name=name, tool_use_id=context.tool_use_id)
                exposed = self._input_exposed(tool)
                if exposed:  # else nothing outside the kernel sees the input before it runs
                    state.original_input = dict(call.input)
                if self.hooks.has("pre_tool_use"):  # a hook step nobody implements costs no coroutine
                    model = await self.pre_tool_use(call, model, context, state)
                state.model = model
                await self.authorize(call, context, state, approver)
                if (exposed or self._approver_saw(state, approver)) and _input_moved(call, model, state):
                    model = validate_input(tool, call.input)
                result = await self.execute(call, model, context, state)
                if self.hooks.has("post_tool_use"):
                    result = await self.post_tool_use(call, result, context, state)
                result = self.project(tool, result, context, enabled)
                projected = True
            except CallRefused as refused:
                result = refused.result
            except Exception as exc:  # a kernel bug must still not crash the host
                result = ToolResult.refusal(
                    Reason.TOOL_ERROR, f"Pegboard failed on this call: {type(exc).__name__}: {exc}"
                )
            result = redact_outgoing(self.finish(result, state), self.secrets, text=not projected)
            if session is not None and session.has_listeners("call_finished"):
                session.emit(
                    "call_finished",
                    {"name": context.tool or name, "is_error": result.is_error, "reason": result.reason},
                    tool_use_id=context.tool_use_id,
                    tool=context.tool or name,
                )
            return result
        finally:
            if paths is not None:
                paths.close()
                CALL_PATHS.reset(scope)

    def _input_exposed(self, tool: Tool) -> bool:
        """Could code outside the kernel change ``call.input`` in place before the tool runs?
        Hooks and a tool's own ``permission_subjects`` / ``specifier_matcher`` see it."""
        return (
            self.hooks.has_any(INPUT_HOOKS)
            or tool.permission_subjects is not None
            or tool.specifier_matcher is not None
        )

    @staticmethod
    def _approver_saw(state: CallState, approver: Approver | None) -> bool:
        """Did the caller's approver get ``call.input`` (the call was not allowed outright)?"""
        return approver is not None and state.permission is not None and state.permission.decision != "allow"

    # 1 -------------------------------------------------------------------------------------
    def resolve(
        self,
        name: str,
        enabled: set[str] | None,
        disabled: Mapping[str, str],
        availability: tuple[Tool, str | None] | None = None,
    ) -> Tool:
        tool = self.registry.find(name) if isinstance(name, str) else None
        if tool is None:
            raise CallRefused(self._unknown(name, enabled))
        if availability is not None and availability[0] is tool:
            reason = availability[1]
        else:
            reason = tool.unavailable_reason(self.hooks.owner)
        if reason:
            raise CallRefused(
                ToolResult.refusal(Reason.UNAVAILABLE, f"Tool {tool.name!r} is not available here: {reason}")
            )
        if enabled is not None and tool.name not in enabled:
            why = disabled.get(tool.name)
            raise CallRefused(
                ToolResult.refusal(
                    Reason.DENIED,
                    f"Tool {tool.name!r} is denied for this agent: {why}"
                    if why
                    else f"Tool {tool.name!r} is not enabled for this agent; see `pegboard tools --explain` for why",
                )
            )
        return tool

    def _unknown(self, name: object, enabled: set[str] | None) -> ToolResult:
        if isinstance(name, str) and (pending := self.pending_reason(name)):
            return ToolResult.refusal(Reason.UNAVAILABLE, f"Tool {name!r} is not available yet: {pending}")
        candidates = self.registry.candidates(name) if isinstance(name, str) else []
        if candidates:
            listed = ", ".join(map(repr, candidates))
            return ToolResult.refusal(
                Reason.UNKNOWN_TOOL,
                f"Unknown tool {name!r}: it could mean {listed}; call one of them by its exact name",
                candidates=candidates,
            )
        known = ", ".join(sorted(enabled if enabled is not None else self.registry.names())[:40])
        failed = [p.name for p in self.plugins if p.status == "failed"]
        also = f". Plugins that failed to load (see pegboard plugins): {', '.join(failed)}" if failed else ""
        message = f"Unknown tool {name!r}. Available tools: {known or '(none)'}{also}"
        return ToolResult.refusal(Reason.UNKNOWN_TOOL, message)

    # 3 -------------------------------------------------------------------------------------
    async def pre_tool_use(self, call: ToolCall, model: BaseModel, ctx: ToolContext, state: CallState) -> BaseModel:
        if not self.hooks.has("pre_tool_use"):
            return model
        decisions: list[HookDecision] = []
        async for plugin, answer in self.hooks.each("pre_tool_use", state.hook_errors, call=call, context=ctx):
            decision = self._hook_decision(answer, plugin, "pre_tool_use", state)
            if decision is None:
                continue
            decisions.append(decision)
            self._collect(decision, state)
            if decision.updated_input is not None:
                model = self._revalidate(call, decision, plugin)
            if decision.decision == "deny" or not decision.continue_:
                break
        if not decisions:  # every hook passed
            return model
        combined = strongest_hook_decision(decisions)
        state.hook_decision = combined
        stopped = next((d for d in decisions if not d.continue_), None)
        if stopped is not None:
            raise CallRefused(ToolResult.refusal(Reason.HOOK_BLOCKED, stopped.stop_reason or "A hook stopped the run"))
        if combined is not None and combined.decision == "deny":
            raise CallRefused(
                ToolResult.refusal(
                    Reason.HOOK_BLOCKED,
                    f"Blocked by hook ({combined.source}): {combined.reason or 'no reason given'}",
                )
            )
        if combined is not None and combined.decision == "defer":
            raise CallRefused(
                ToolResult.refusal(
                    "deferred", f"Deferred by hook ({combined.source}): {combined.reason or 'handed back to the host'}"
                )
            )
        return model

    def _revalidate(self, call: ToolCall, decision: HookDecision, plugin: str) -> BaseModel:
        try:
            model = call.tool.input_model.model_validate(decision.updated_input)
        except ValidationError as exc:
            raise CallRefused(
                ToolResult.refusal(
                    Reason.INVALID_INPUT,
                    f"Hook {plugin} rewrote the input into something invalid.\n"
                    + describe_validation_error(call.tool, exc),
                )
            ) from None
        call.input = dump_input(model)
        return model

    # 4 and 5 -------------------------------------------------------------------------------
    async def authorize(self, call: ToolCall, ctx: ToolContext, state: CallState, approver: Approver | None) -> None:
        """Rules and hooks decide; a deny refuses, an allow runs, an ask goes to
        ``permission_request`` hooks and then to whoever approves."""
        decision = await self.rule_decision(call, ctx, state)
        decision = state.permission = with_hook_opinion(decision, state.hook_decision)
        if decision.decision == "deny":
            raise CallRefused(ToolResult.refusal(Reason.DENIED, deny_message(call, decision), rule=decision.rule))
        if decision.decision == "allow":
            return
        refuse_unaskable(call, decision, ctx)
        settled = await self.permission_request(call, ctx, state, decision)
        if settled is None:
            return
        await self.approve(call, ctx, state, settled, approver)

    async def rule_decision(self, call: ToolCall, ctx: ToolContext, state: CallState) -> PermissionDecision:
        """The Authorizer's answer for the input as it is now and, when a hook rewrote it, for
        the input as the model sent it: a rewrite must not launder a call that a rule covers."""
        model = state.model if state.model is not None and _unchanged(call, state) else None
        decision, final = self.authorizer.rules_decision(call, ctx, model)
        if not final and self.hooks.has("check_permission"):
            decision = await self.authorizer.with_hooks(decision, call, ctx, state.hook_errors)
        if state.original_input is None or state.original_input == call.input:
            return decision
        original = ToolCall(call.tool, dict(state.original_input), call.requested_name, call.tool_use_id)
        before = await self.authorizer.decide(original, ctx, state.hook_errors)
        if before.rule is None or before.decision == "allow":
            return decision
        strongest = strongest_permission(
            [decision, before.model_copy(update={"reason": f"{before.reason} (the input before a hook rewrote it)"})]
        )
        return strongest or decision

    async def permission_request(
        self, call: ToolCall, ctx: ToolContext, state: CallState, decision: PermissionDecision
    ) -> PermissionDecision | None:
        """``permission_request`` hooks may settle an ask; ``None`` when one allowed the call,
        else the ask (perhaps a stricter one) that goes on to the approver."""
        async for plugin, answer in self.hooks.each(
            "permission_request", state.hook_errors, call=call, decision=decision, context=ctx
        ):
            settled = self._hook_decision(answer, plugin, "permission_request", state)
            if settled is None:
                continue
            self._collect(settled, state)
            if settled.updated_input is not None:
                self._revalidate(call, settled, plugin)
                recheck = await self.rechecked(call, ctx, state, decision)
                if recheck is not None:
                    return recheck
            if settled.decision == "allow" and decision.hard and decision.unseen_files \
                    and settled.enforces_file_rules:
                return None
            if settled.decision == "allow" and decision.hard:
                state.notices.append(f"permission_request hook {plugin} cannot approve this: {decision.reason}")
            elif settled.decision == "allow":
                return None
            if settled.decision == "deny":
                raise CallRefused(
                    ToolResult.refusal(
                        Reason.DENIED, f"Denied by permission_request hook ({plugin}): {settled.reason or ''}"
                    )
                )
        return decision

    async def rechecked(
        self, call: ToolCall, ctx: ToolContext, state: CallState, decision: PermissionDecision
    ) -> PermissionDecision | None:
        """A permission_request hook rewrote the input: it is checked against the rules again.
        A deny rule refuses it; an ask rule it newly meets goes to the approver instead of
        the hook's allow (returned); otherwise ``None``."""
        recheck = await self.authorizer.decide(call, ctx, state.hook_errors)
        if recheck.decision == "deny":
            state.permission = recheck
            raise CallRefused(ToolResult.refusal(Reason.DENIED, deny_message(call, recheck), rule=recheck.rule))
        if recheck.decision == "ask" and recheck.rule is not None and recheck.rule != decision.rule:
            state.permission = recheck
            return recheck
        return None

    async def approve(
        self,
        call: ToolCall,
        ctx: ToolContext,
        state: CallState,
        decision: PermissionDecision,
        approver: Approver | None,
    ) -> None:
        """A ``request_approval`` hook answers first, else the caller's approver; only ``True``
        (or a ``PermissionUpdate`` that approves) lets the call run."""
        answer = await self.hooks.first(
            "request_approval", state.hook_errors, call=call, decision=decision, context=ctx
        )
        if answer is None and approver is not None:
            try:
                answer = approver(call, decision)
                if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
                    answer = await answer
            except Exception as exc:
                state.hook_errors.append(HookError("approver", "host", f"{type(exc).__name__}: {exc}"))
                answer = None
        if isinstance(answer, PermissionUpdate):
            if ctx.session is not None and answer.approve:
                ctx.session.remember(answer)
            answer = answer.approve
        if answer is True:
            return
        if answer is False:
            outcome = "the approver refused"
        else:
            outcome = "no approver answered" if approver is not None else "no approver is available"
        raise CallRefused(not_approved(call, decision, ctx, approver, outcome))

    # 6 -------------------------------------------------------------------------------------
    async def execute(self, call: ToolCall, model: BaseModel, ctx: ToolContext, state: CallState) -> ToolResult:
        timeout = call.tool.timeout or self.default_timeout
        if ctx.session is not None and ctx.session.has_readers():
            await asyncio.sleep(0)  # let events() readers take call_started before the tool runs
        try:
            value = await self.deadlines.run(call.tool.run(model, ctx), timeout)
            if isinstance(value, ToolResult):
                state.foreign.append(value)
            return coerce_result(value)
        except TimeoutError as exc:
            result = ToolResult.refusal(
                Reason.TIMEOUT, f"{call.name} did not finish within {timeout:g} s and was cancelled"
            )
            return await self.failure(call, exc, result, ctx, state)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = ToolResult.refusal(Reason.TOOL_ERROR, f"{call.name} failed: {type(exc).__name__}: {exc}")
            return await self.failure(call, exc, result, ctx, state)

    async def failure(
        self, call: ToolCall, exc: BaseException, result: ToolResult, ctx: ToolContext, state: CallState
    ) -> ToolResult:
        async for plugin, answer in self.hooks.each(
            "post_tool_use_failure", state.hook_errors, call=call, error=exc, context=ctx
        ):
            if (decision := self._hook_decision(answer, plugin, "post_tool_use_failure", state)) is not None:
                self._collect(decision, state)
        return result

    # 7 -------------------------------------------------------------------------------------
    async def post_tool_use(self, call: ToolCall, result: ToolResult, ctx: ToolContext, state: CallState) -> ToolResult:
        if result.is_error and result.reason in (Reason.TOOL_ERROR, Reason.TIMEOUT):
            return result
        if not self.hooks.has("post_tool_use"):
            return result
        async for plugin, answer in self.hooks.each(
            "post_tool_use", state.hook_errors, call=call, result=result, context=ctx
        ):
            if isinstance(answer, ToolResult):
                state.foreign.append(answer)
                result = answer
                continue
            decision = self._hook_decision(answer, plugin, "post_tool_use", state)
            if decision is None:
                continue
            self._collect(decision, state)
            if decision.updated_output is not None:
                try:
                    state.foreign.append(decision.updated_output)
                    result = coerce_result(decision.updated_output)
                except TypeError as exc:
                    state.hook_errors.append(HookError("post_tool_use", plugin, f"invalid updated_output: {exc}"))
            if decision.decision == "deny":
                block = f"[Blocked by hook {plugin} after the tool ran: {decision.reason or 'no reason given'}]"
                result = result.model_copy(
                    update={
                        "content": [*result.content, TextBlock(text=block)],
                        "is_error": True,
                        "reason": Reason.HOOK_BLOCKED.value,
                    }
                )
        return result

    # 8 -------------------------------------------------------------------------------------
    def project(self, tool: Tool, result: ToolResult, ctx: ToolContext, enabled: set[str] | None) -> ToolResult:
        reader = self.reader(enabled)
        return project(
            result,
            tool=tool.name,
            limit=tool.max_result_chars,
            store=ctx.session.results if ctx.session is not None else self.fallback_results(),
            secrets=self.secrets,
            reader=reader.name if reader else None,
            note=reader.result_note if reader else None,
            redact_text=not tool.reads_results,
        )

    def reader(self, enabled: set[str] | None) -> ToolEntry | None:
        """The first of :meth:`readers` that ``enabled`` holds, worked out once per state of
        the tool set and enabled set (the caller hands the same set back while it holds)."""
        version, names, found = self._reader
        if version != self.registry.version or names is not enabled:
            found = next((t for t in self.readers() if enabled is None or t.name in enabled), None)
            self._reader = (self.registry.version, enabled, found)
        return found

    def readers(self) -> list[ToolEntry]:
        """The registered tools that page through stored results, per state of the tool set
        (declared ones stay unimported until a cut result asks for their note)."""
        version, found = self._readers
        if version != self.registry.version:
            found = [t for t in self.registry.sorted_entries() if t.reads_results]
            self._readers = (self.registry.version, found)
        return found

    # helpers -------------------------------------------------------------------------------
    def _hook_decision(self, answer: Any, plugin: str, hook: str, state: CallState) -> HookDecision | None:
        """A hook's answer as one ``HookDecision``; a field its stage cannot use is reported
        in ``hook_errors`` and left out, never silently dropped."""
        if isinstance(answer, PreToolUseDecision | PostToolUseDecision):
            answer = HookDecision(**dict(answer))
        elif isinstance(answer, Mapping):
            try:
                answer = HookDecision.model_validate({**answer, "source": answer.get("source", plugin)})
            except ValidationError as exc:
                state.hook_errors.append(HookError(hook, plugin, f"invalid decision: {exc.errors()[0]['msg']}"))
                return None
        elif not isinstance(answer, HookDecision):
            expected = "PostToolUseDecision" if hook in AFTER_RUN_HOOKS else "PreToolUseDecision"
            state.hook_errors.append(HookError(hook, plugin, f"returned {type(answer).__name__}, expected {expected}"))
            return None
        if hook in BEFORE_RUN_HOOKS and answer.updated_output is not None:
            state.hook_errors.append(
                HookError(hook, plugin, f"updated_output ignored: {hook} runs before the tool, so only "
                          "post_tool_use may replace the output (return a PreToolUseDecision)")
            )
            answer = answer.model_copy(update={"updated_output": None})
        if hook in AFTER_RUN_HOOKS and answer.updated_input is not None:
            state.hook_errors.append(
                HookError(hook, plugin, f"updated_input ignored: {hook} runs after the tool, so only "
                          "pre_tool_use or permission_request may rewrite the input (return a PostToolUseDecision)")
            )
            answer = answer.model_copy(update={"updated_input": None})
        return answer if answer.source else answer.model_copy(update={"source": plugin})

    @staticmethod
    def _collect(decision: HookDecision, state: CallState) -> None:
        if decision.additional_context:
            state.additional_context.append(decision.additional_context)
        if decision.system_message:
            state.system_messages.append(decision.system_message)
        state.notices.extend(decision.notices)

    @staticmethod
    def finish(result: ToolResult, state: CallState) -> ToolResult:
        extra: dict[str, Any] = {}
        if state.hook_errors:
            extra["hook_errors"] = [e.to_json() for e in state.hook_errors]
        if state.additional_context:
            extra["additional_context"] = list(state.additional_context)
        if state.system_messages:
            extra["system_messages"] = list(state.system_messages)
        if state.notices:
            extra["hook_notices"] = list(state.notices)
        if state.permission is not None:
            extra["permission"] = state.permission.to_json()
        update: dict[str, Any] = {"metadata": {**result.metadata, **extra}} if extra else {}
        if result.is_error and not result.reason:  # every error says why: here, the tool's own failure
            update["reason"] = Reason.TOOL_ERROR.value
        if not update:
            return result
        for handed in state.foreign:
            if result is handed:
                return result.model_copy(update=update)
        for key, value in update.items():
            setattr(result, key, value)
        return result


_FLAT = frozenset({str, int, float, bool, type(None)})


def _unchanged(call: ToolCall, state: CallState) -> bool:
    """Is ``call.input`` still the input as first validated? Known for an input of plain
    values that equals its copy taken before the hooks ran (a hook's rewrite, or a change
    made in place, shows as a difference)."""
    before = state.original_input
    return before is not None and call.input == before and _FLAT.issuperset(map(type, before.values()))


def _input_moved(call: ToolCall, model: BaseModel, state: CallState) -> bool:
    """Does ``call.input`` differ from what ``model`` holds (something outside the kernel
    changed it in place)? An unchanged input needs no second dump of the model."""
    return not _unchanged(call, state) and call.input != dump_input(model)


def with_hook_opinion(decision: PermissionDecision, hook: HookDecision | None) -> PermissionDecision:
    """A ``pre_tool_use`` hook's ``ask`` turns a rule's allow into an ask; its ``allow``
    settles an ask that no rule made and that is not hard (a tool-default ask)."""
    if hook is None:
        return decision
    if hook.decision == "ask" and decision.decision == "allow":
        return PermissionDecision(decision="ask", source=hook.source, reason=hook.reason or "a pre_tool_use hook asked")
    if hook.decision == "allow" and decision.decision == "ask" and decision.rule is None and not decision.hard:
        return PermissionDecision(
            decision="allow", source=hook.source, reason=hook.reason or "allowed by a pre_tool_use hook"
        )
    return decision


def refuse_unaskable(call: ToolCall, decision: PermissionDecision, ctx: ToolContext) -> None:
    """``dontAsk`` mode: whatever still asks after the rules and hooks is denied, not asked.

    The rule engine already denies its own asks in this mode; this is the one place where an
    ask from a hook (or a ``check_permission`` opinion) meets the mode.
    """
    if ctx.mode == "dontAsk":
        refusal = not_approved(call, decision, ctx, None, "dontAsk mode denies instead of asking")
        refusal.reason = Reason.DENIED.value
        refusal.metadata["how_to_approve"] = HARD_HOW_TO_APPROVE if decision.hard else DONT_ASK_HOW_TO_APPROVE
        raise CallRefused(refusal)


def deny_message(call: ToolCall, decision: PermissionDecision) -> str:
    where = (
        f" (rule {decision.rule!r}" + (f" in {decision.source})" if decision.source else ")") if decision.rule else ""
    )
    return f"Permission to use {call.name} was denied{where}: {decision.reason}".rstrip(": ")


#: what the Python API tells a caller that passed no approver
API_HOW_TO_APPROVE = "pass approver= to Pegboard.call, or let a request_approval hook answer"
DONT_ASK_HOW_TO_APPROVE = "add an allow rule or run in another mode (dontAsk denies every ask)"
HARD_HOW_TO_APPROVE = "only a person can approve this call: run in a mode that asks, with an approver"


def not_approved(
    call: ToolCall, decision: PermissionDecision, ctx: ToolContext | None, approver: Approver | None, outcome: str
) -> ToolResult:
    """The refusal of a call that asked and was not approved.

    Its text is for the model: why it asked, what happened, and the narrowest allow rule when
    one can let exactly this call run. How the developer can approve (``approver=``, the
    CLI's ``--yes``) goes to ``metadata["how_to_approve"]``, the rules to
    ``metadata["suggested_rules"]``.
    """
    metadata: dict[str, Any] = {
        "how_to_approve": getattr(approver, "how_to_approve", None) or API_HOW_TO_APPROVE
    }
    message = ask_message(call, decision, ctx, outcome, metadata)
    return ToolResult.refusal(Reason.NOT_APPROVED, message, **metadata)


def ask_message(
    call: ToolCall,
    decision: PermissionDecision,
    ctx: ToolContext | None,
    outcome: str,
    metadata: dict[str, Any] | None = None,
) -> str:
    """Why the call waits for approval, what became of the ask, and what would allow it.

    The suggested rules are the narrowest that allow this very call (``Read(//etc/hosts)``,
    one per simple command of a shell line); they land in ``metadata`` too.
    """
    rule = (
        f" by rule {decision.rule!r}" + (f" in {decision.source}" if decision.source else "") if decision.rule else ""
    )
    head = f"{call.name} needs approval{rule} ({decision.reason}); {outcome}"
    if decision.hard:
        return f"{head}. Only a person can approve it; no rule or hook can."
    if decision.rule is not None or outcome == "the approver refused":
        return f"{head}."
    from pegboard.core.permissions.suggest import suggest_allow_rules

    found = suggest_allow_rules(call.tool, call.input, ctx.cwd if ctx is not None else Path.cwd())
    if metadata is not None and found.rules:
        metadata["suggested_rules"] = list(found.rules)
    if found.allows:
        return f'{head}. To allow it, add "{found.text}" to permissions.allow.'
    if found.rules:
        commands = f'its commands: "{found.text}"'
        return f"{head}. No narrow allow rule lets it run as written ({commands}); it must be approved."
    return f"{head}. No narrow allow rule lets it run as written, so it must be approved."


__all__ = ["Approver", "CallPipeline", "CallRefused", "validate_input"]
