"""The built-in ``ApplyPatch`` tool (``apply_patch``): add, update, move and delete files from
one patch, all or nothing.

Optional, as in OpenClaw: offered only when ``tools.exec.applyPatch.enabled`` is true or an
allowlist names it exactly. Paths stay inside the working directories (the session's cwd
and its additional directories, symlinks resolved first) unless
``tools.exec.applyPatch.workspaceOnly`` is false. Written only against Pegboard's public API
and the toolkit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    Subjects,
    TextBlock,
    Tool,
    ToolContext,
    ToolRegister,
    ToolResult,
    Widens,
    hookimpl,
    resolve_path,
    tool,
)
from pegboard_apply_patch.apply import commit, plan
from pegboard_apply_patch.parser import FORMAT_HELP, PatchError, parse_patch, patch_paths

SETTINGS_KEY = "tools.exec.applyPatch"


class ApplyPatchSettings(BaseModel):
    """``tools.exec.applyPatch``: whether ApplyPatch is offered and where it may write."""

    enabled: Annotated[bool, NEUTRAL] = Field(default=False, description="Offer ApplyPatch without naming it.")
    workspaceOnly: Annotated[bool, Widens.when_false("lets ApplyPatch write outside the working directories")] = (
        Field(default=True, description="Keep every path inside the working directories.")
    )
    allModels: Annotated[bool, NEUTRAL] = Field(
        default=False, description="Offer it to every OpenAI model, not only those made for it."
    )


SECTION = ConfigSection(SETTINGS_KEY, ApplyPatchSettings, description="ApplyPatch: opt-in and workspace limit")


class ApplyPatchInput(BaseModel):
    input: str = Field(description="The whole patch, from '*** Begin Patch' to '*** End Patch'.")


def settings(config: Any) -> Mapping[str, Any]:
    """``tools.exec.applyPatch`` from a ``PegboardConfig`` (or ``{}``): a key Pegboard's config
    model does not declare, so it is read from the ``tools`` section's extra keys."""
    tools = getattr(config, "tools", None)
    extra = getattr(tools, "model_extra", None) or {}
    section = extra.get("exec")
    if not isinstance(section, Mapping):
        return {}
    found = section.get("applyPatch", section.get("apply_patch"))
    return found if isinstance(found, Mapping) else {}


def _fail(kind: str, message: str, **metadata: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **metadata)


def _subjects(input: ApplyPatchInput) -> Subjects:
    return Subjects(paths_written=tuple(patch_paths(input.input)))


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _summary(changes: list[Any]) -> str:
    out = ["Success. Updated the following files:"]
    for c in changes:
        letter = {"added": "A", "deleted": "D"}.get(c.action, "M")
        out.append(f"{letter} {c.shown}" + (f" -> {c.shown_move}" if c.shown_move else ""))
    return "\n".join(out)


DESCRIPTION = (
    "Apply a patch that adds, updates, moves or deletes files, in this format:\n" + FORMAT_HELP + "\n"
    "Context lines start with a space, removed lines with '-', added lines with '+'. Use '@@ <line>' headers "
    "(several in a row to narrow down) to say where a hunk is when its context lines are not unique, and "
    "'*** End of File' for a hunk at the end of a file. Paths are relative to the working directory. Every hunk "
    "must apply, or nothing is changed."
)


async def run_apply_patch(input: ApplyPatchInput, ctx: ToolContext) -> ToolResult:
    try:
        ops = parse_patch(input.input)
    except PatchError as exc:
        return _fail(exc.kind, exc.message)
    config = ctx.config.config if ctx.config is not None else None
    workspace_only = settings(config).get("workspaceOnly", True) is not False
    home = ctx.env.get("HOME")
    roots = [os.path.realpath(str(d)) for d in (ctx.cwd, *ctx.additional_dirs)]
    cache: dict[str, Path] = {}

    def resolve(raw: str) -> Path:
        if raw in cache:
            return cache[raw]
        try:
            path = resolve_path(raw, ctx.cwd, home)
        except ValueError as exc:
            raise PatchError("invalid_path", f"Invalid path {raw!r}: {exc}") from None
        real = os.path.realpath(path)
        if workspace_only and not _inside(real, roots):
            raise PatchError(
                "outside_workspace",
                f"{raw} is outside the working directories ({', '.join(roots)}); ApplyPatch changes files only "
                "inside them (tools.exec.applyPatch.workspaceOnly is true).",
            )
        if not ctx.permissions.may_write(path):
            raise PatchError("permission_denied", f"{raw}: a permission rule denies editing this file.")
        cache[raw] = path
        return path

    try:
        ws, changes = plan(ops, resolve)
        commit(ws)
    except PatchError as exc:
        return _fail(exc.kind, exc.message)
    files = [c.as_dict() for c in changes]
    message = _summary(changes)
    structured = {
        "message": message,
        "files": files,
        "added": [f["path"] for f in files if f["action"] == "added"],
        "modified": [f["movePath"] or f["path"] for f in files if f["action"] in ("updated", "moved")],
        "deleted": [f["path"] for f in files if f["action"] == "deleted"],
        "success": True,
    }
    return ToolResult(content=[TextBlock(text=message)], structured=structured)


def make_tool(*, optional: bool = True) -> Tool:
    """The ApplyPatch tool: optional (offered only when named) unless
    ``tools.exec.applyPatch.enabled`` is true, which the kernel reads from the config."""
    return tool(
        name="ApplyPatch",
        description=DESCRIPTION,
        groups=["fs", "file", "pegboard"],
        optional=optional,
        enabled_by=f"{SETTINGS_KEY}.enabled",
        permission_family="Edit",
        requires_permission=True,
        destructive=True,
        permission_subjects=_subjects,
        usage="Change several files (or several places of one) in one all-or-nothing patch.",
    )(run_apply_patch)


apply_patch = make_tool()


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(SECTION)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(apply_patch)


__all__ = [
    "SECTION",
    "ApplyPatchInput",
    "ApplyPatchSettings",
    "apply_patch",
    "make_tool",
    "parse_patch",
    "run_apply_patch",
    "settings",
]
