"""The task list tools: TaskCreate, TaskGet, TaskList, TaskUpdate, task_complete, and TodoWrite.

Tasks live in a list with stable ids, dependencies (``blocks`` / ``blockedBy``) and a
status. The list is the session's by default; Anyy's spellings (``task_create``,
``task_list``, ``task_update``, ``task_complete``) work over a durable user-scope list that
outlives sessions (a SQLite file in the data directory). A whole list is one stored value
changed in one transaction, so two processes never lose a change and a dependency cycle is
checked against what is really stored.

TodoWrite replaces the whole session to-do list at once. Exactly one family is enabled:
the Task tools unless ``PEGBOARD_ENABLE_TASKS`` (or Fuxi Code's ``FUXI_CODE_ENABLE_TASKS``)
is ``0``, or the setting ``tools.tasks.enabled`` is ``false``; then TodoWrite.
Every change is a ``tasks_changed`` session event.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    Pegboard,
    Session,
    SessionKey,
    SessionState,
    StashKey,
    Tool,
    ToolContext,
    ToolRegister,
    ToolResult,
    default_data_dir,
    hookimpl,
    tool,
)
from pegboard_tasks_switch import (
    SETTINGS_KEY,
    decide,
    task_tools_off,
    todo_write_off,
)

if TYPE_CHECKING:
    from pegboard import SQLiteSessionStore

USER_STORE_FILE = "tasks.sqlite3"
USER_LIST_ID = "user"

Status = Literal["pending", "in_progress", "completed", "deleted"]
Scope = Literal["session", "user"]


class Task(BaseModel):
    id: str
    subject: str
    description: str = ""
    activeForm: str | None = None
    status: Status = "pending"
    owner: str | None = None
    blocks: list[str] = Field(default_factory=list)
    blockedBy: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    scope: Scope = "session"
    note: str | None = None
    created: float = 0.0
    updated: float = 0.0


class TaskBoard(BaseModel):
    """One task list: the next id and the tasks by id (deleted ones are gone; ids never repeat)."""

    next_id: int = 1
    tasks: dict[str, Task] = Field(default_factory=dict)


TASKS: SessionKey[TaskBoard] = SessionKey("pegboard-tasks", TaskBoard, persist=True, default=TaskBoard)


class Todo(BaseModel):
    content: str = Field(min_length=1, description="What to do, in the imperative ('Run the tests').")
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str = Field(min_length=1, description="The same in the present continuous ('Running the tests').")


TODOS: SessionKey[list[Todo]] = SessionKey(
    "pegboard-todos",
    list,
    persist=True,
    default=list,
    encode=lambda todos: [t.model_dump(mode="json") for t in todos],
    decode=lambda data: [Todo.model_validate(item) for item in data],
)
USER_STORE: StashKey[SQLiteSessionStore] = StashKey("pegboard-tasks-user-store")


class TaskError(ValueError):
    """A change the list refuses (unknown id, a cycle); the message says why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# -- the switch --------------------------------------------------------------------------------
class TasksSettings(BaseModel):
    """``tools.tasks``: which family is on, and which list the Claude-Code spellings use."""

    enabled: Annotated[bool | None, NEUTRAL] = Field(
        default=None, description="false: TodoWrite instead of the Task tools"
    )
    defaultScope: Annotated[Scope, NEUTRAL] = Field(
        default="session", description="the list TaskCreate and friends use by default"
    )


def tasks_enabled(env: Mapping[str, str], settings: TasksSettings) -> tuple[bool, str]:
    """Whether the Task tools (not TodoWrite) are on, and what decided it."""
    return decide(env, settings.enabled)


def settings_of(pegboard: Pegboard | None) -> TasksSettings:
    if pegboard is None:
        return TasksSettings()
    found: TasksSettings = pegboard.settings(SETTINGS_KEY)
    return found


# -- the lists -------------------------------------------------------------------------------------
def user_state(pegboard: Pegboard) -> SessionState:
    """The durable user-scope list: its own SQLite file in the data directory."""
    store = pegboard.stash.get(USER_STORE)
    if store is None:
        from pegboard import SQLiteSessionStore

        store = SQLiteSessionStore(default_data_dir(pegboard.data_env()) / USER_STORE_FILE)
        pegboard.stash[USER_STORE] = store
    return SessionState(store, USER_LIST_ID)


def choose_scope(ctx: ToolContext, given: Scope | None, seed_default: Scope | None = None) -> Scope:
    """``scope`` if given; Anyy's spellings (``task_create``) mean the user list; else the setting."""
    if given is not None:
        return given
    if seed_default is not None:
        return seed_default
    name = ctx.requested_name or ""
    if "_" in name and name == name.lower():
        return "user"
    return settings_of(ctx.pegboard).defaultScope


def state_for(ctx: ToolContext, scope: Scope) -> SessionState:
    if scope == "user":
        if ctx.pegboard is None:
            raise TaskError("not_available", "the user task list needs a context built by Pegboard")
        return user_state(ctx.pegboard)
    if ctx.session is None:
        raise TaskError("not_available", "the session task list needs a session")
    return ctx.session.state


def change(ctx: ToolContext, scope: Scope, fn: Callable[[TaskBoard], Any]) -> tuple[TaskBoard, Any]:
    """Apply ``fn`` to the stored list in one transaction; emit ``tasks_changed``."""
    box: dict[str, Any] = {}

    def step(board: TaskBoard | None) -> TaskBoard:
        board = (board or TaskBoard()).model_copy(deep=True)
        box["answer"] = fn(board)
        return board

    board = state_for(ctx, scope).update(TASKS, step)
    assert board is not None
    ctx.emit("tasks_changed", {"scope": scope, "tasks": [summary(t, board) for t in board.tasks.values()]})
    return board, box.get("answer")


def read_board(ctx: ToolContext, scope: Scope) -> TaskBoard:
    return state_for(ctx, scope)[TASKS]


def open_blockers(task: Task, board: TaskBoard) -> list[str]:
    return [b for b in task.blockedBy if (t := board.tasks.get(b)) is not None and t.status != "completed"]


def summary(task: Task, board: TaskBoard) -> dict[str, Any]:
    return {
        "id": task.id,
        "subject": task.subject,
        "status": task.status,
        "owner": task.owner,
        "blockedBy": open_blockers(task, board),
    }


def describe(task: Task, board: TaskBoard) -> dict[str, Any]:
    return {**task.model_dump(mode="json"), "openBlockers": open_blockers(task, board)}


def find(board: TaskBoard, task_id: str) -> Task:
    key = task_id.strip().lstrip("#")
    task = board.tasks.get(key)
    if task is None:
        known = ", ".join(f"#{k}" for k in board.tasks) or "none"
        raise TaskError("not_found", f"No task #{key} in this list (tasks: {known})")
    return task


def reaches(board: TaskBoard, start: str, goal: str) -> bool:
    """Whether ``goal`` is reachable from ``start`` along ``blocks`` edges."""
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node in seen:
            continue
        seen.add(node)
        task = board.tasks.get(node)
        if task is not None:
            todo.extend(task.blocks)
    return False


def link(board: TaskBoard, blocker: str, blocked: str) -> None:
    """Make ``blocker`` block ``blocked``, refusing a cycle."""
    first, second = find(board, blocker), find(board, blocked)
    if first.id == second.id:
        raise TaskError("cycle", f"task #{first.id} cannot block itself")
    if reaches(board, second.id, first.id):
        raise TaskError(
            "cycle", f"#{first.id} blocking #{second.id} would make a cycle: #{second.id} already blocks #{first.id}"
        )
    if second.id not in first.blocks:
        first.blocks.append(second.id)
    if first.id not in second.blockedBy:
        second.blockedBy.append(first.id)


def task_refusal(exc: TaskError) -> ToolResult:
    reason = "invalid_input" if exc.kind in ("cycle", "not_found") else "tool_error"
    return ToolResult.refusal(reason, str(exc), error_kind=exc.kind)


def line(task: Task, board: TaskBoard) -> str:
    blockers = open_blockers(task, board)
    parts = [f"#{task.id} [{task.status}] {task.subject}"]
    if task.owner:
        parts.append(f"(owner: {task.owner})")
    if blockers:
        parts.append("[blocked by " + ", ".join(f"#{b}" for b in blockers) + "]")
    return " ".join(parts)


# -- inputs --------------------------------------------------------------------------------------
SCOPE_FIELD = Field(
    default=None,
    description="'session' (this conversation's list) or 'user' (the durable personal list); "
    "the default depends on the tool's spelling and settings.",
)


class TaskCreateInput(BaseModel):
    subject: str = Field(min_length=1, description="A short imperative title ('Fix the login bug').")
    description: str = Field(default="", description="What needs doing, in detail.")
    activeForm: str | None = Field(default=None, description="Shown while in progress ('Fixing the login bug').")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Any extra data to keep with the task.")
    scope: Scope | None = SCOPE_FIELD


class TaskGetInput(BaseModel):
    taskId: str = Field(min_length=1, description="The task's id, as TaskCreate or TaskList gave it.")
    scope: Scope | None = SCOPE_FIELD


class TaskListInput(BaseModel):
    status: Status | None = Field(default=None, description="Only tasks with this status.")
    owner: str | None = Field(default=None, description="Only tasks with this owner.")
    scope: Scope | None = SCOPE_FIELD


class TaskUpdateInput(BaseModel):
    taskId: str = Field(min_length=1, description="The task to change.")
    subject: str | None = Field(default=None, min_length=1)
    description: str | None = None
    activeForm: str | None = None
    status: Status | None = Field(default=None, description="'deleted' removes the task.")
    owner: str | None = None
    metadata: dict[str, Any] | None = Field(default=None, description="Keys to merge; a null value removes a key.")
    addBlocks: list[str] = Field(default_factory=list, description="Tasks that cannot start until this one is done.")
    addBlockedBy: list[str] = Field(default_factory=list, description="Tasks that must be done before this one.")
    scope: Scope | None = SCOPE_FIELD


class TaskCompleteInput(BaseModel):
    taskId: str = Field(min_length=1, description="The task to complete.")
    note: str | None = Field(default=None, description="An optional note on how it was done.")
    scope: Scope | None = Field(default=None, description="'user' (default: the durable list) or 'session'.")


class TodoWriteInput(BaseModel):
    todos: list[Todo] = Field(description="The whole to-do list; it replaces the previous one.")


# -- tools ----------------------------------------------------------------------------------------
def now() -> float:
    return time.time()


@tool(name="TaskCreate", groups=["tasks", "pegboard"], usage="Track multi-step work with TaskCreate / TaskUpdate.")
async def task_create(input: TaskCreateInput, ctx: ToolContext) -> ToolResult:
    """Create a task in the task list: a subject, a description and optionally an activeForm and metadata.

    New tasks are pending. Use TaskUpdate to start, complete or link them."""
    scope = choose_scope(ctx, input.scope)

    def make(board: TaskBoard) -> Task:
        task = Task(
            id=str(board.next_id),
            subject=input.subject,
            description=input.description,
            activeForm=input.activeForm,
            metadata=dict(input.metadata),
            scope=scope,
            created=now(),
            updated=now(),
        )
        board.next_id += 1
        board.tasks[task.id] = task
        return task

    try:
        board, task = change(ctx, scope, make)
    except TaskError as exc:
        return task_refusal(exc)
    return ToolResult.from_text(
        f"Task #{task.id} created successfully: {task.subject}", structured={"task": describe(task, board)}
    )


@tool(name="TaskGet", groups=["tasks", "pegboard"], read_only=True, idempotent=True)
async def task_get(input: TaskGetInput, ctx: ToolContext) -> ToolResult:
    """Get every detail of one task: description, status, owner, dependencies, metadata."""
    scope = choose_scope(ctx, input.scope)
    try:
        board = read_board(ctx, scope)
        task = find(board, input.taskId)
    except TaskError as exc:
        return task_refusal(exc)
    lines = [line(task, board)]
    if task.description:
        lines.append(task.description)
    if task.blocks:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in task.blocks))
    if task.note:
        lines.append(f"Note: {task.note}")
    return ToolResult.from_text("\n".join(lines), structured={"task": describe(task, board)})


@tool(name="TaskList", groups=["tasks", "pegboard"], read_only=True, idempotent=True)
async def task_list(input: TaskListInput, ctx: ToolContext) -> ToolResult:
    """List the tasks with their status, owner and open blockers; filter by status or owner."""
    scope = choose_scope(ctx, input.scope)
    try:
        board = read_board(ctx, scope)
    except TaskError as exc:
        return task_refusal(exc)
    tasks = [
        t
        for t in board.tasks.values()
        if (input.status is None or t.status == input.status) and (input.owner is None or t.owner == input.owner)
    ]
    text = "\n".join(line(t, board) for t in tasks) or "No tasks found."
    return ToolResult.from_text(text, structured={"scope": scope, "tasks": [summary(t, board) for t in tasks]})


def apply_update(board: TaskBoard, input: TaskUpdateInput) -> dict[str, Any]:
    task = find(board, input.taskId)
    if input.status == "deleted":
        for other in board.tasks.values():
            other.blocks = [b for b in other.blocks if b != task.id]
            other.blockedBy = [b for b in other.blockedBy if b != task.id]
        del board.tasks[task.id]
        return {"deleted": task.id, "task": task}
    for name in ("subject", "description", "activeForm", "owner"):
        value = getattr(input, name)
        if value is not None:
            setattr(task, name, value)
    if input.metadata is not None:
        for key, value in input.metadata.items():
            if value is None:
                task.metadata.pop(key, None)
            else:
                task.metadata[key] = value
    for later in input.addBlocks:
        link(board, task.id, later)
    for earlier in input.addBlockedBy:
        link(board, earlier, task.id)
    unblocked: list[str] = []
    if input.status is not None and input.status != task.status:
        task.status = input.status
        if task.status == "completed":
            unblocked = [
                b for b in task.blocks if (t := board.tasks.get(b)) is not None and not open_blockers(t, board)
            ]
    task.updated = now()
    return {"task": task, "unblocked": unblocked}


def update_text(answer: dict[str, Any]) -> str:
    if "deleted" in answer:
        return f"Task #{answer['deleted']} deleted"
    task: Task = answer["task"]
    text = f"Updated task #{task.id} [{task.status}] {task.subject}"
    if answer["unblocked"]:
        text += "\nUnblocked: " + ", ".join(f"#{t}" for t in answer["unblocked"])
    return text


@tool(name="TaskUpdate", groups=["tasks", "pegboard"])
async def task_update(input: TaskUpdateInput, ctx: ToolContext) -> ToolResult:
    """Update a task: status (pending, in_progress, completed, or deleted to remove it), subject,
    description, activeForm, owner, metadata, and dependencies (addBlocks, addBlockedBy).

    Completing a task unblocks the tasks it blocked; a dependency that would make a cycle is refused."""
    scope = choose_scope(ctx, input.scope)
    try:
        board, answer = change(ctx, scope, lambda board: apply_update(board, input))
    except TaskError as exc:
        return task_refusal(exc)
    task: Task = answer["task"]
    structured = {
        "task": task.model_dump(mode="json") if "deleted" in answer else describe(task, board),
        "deleted": "deleted" in answer,
        "unblocked": answer.get("unblocked", []),
    }
    return ToolResult.from_text(update_text(answer), structured=structured)


@tool(name="task_complete", groups=["tasks", "pegboard"])
async def task_complete(input: TaskCompleteInput, ctx: ToolContext) -> ToolResult:
    """Complete a task of the durable personal list, with an optional note; its dependants are unblocked."""
    scope = choose_scope(ctx, input.scope, seed_default="user")

    def complete(board: TaskBoard) -> dict[str, Any]:
        answer = apply_update(board, TaskUpdateInput(taskId=input.taskId, status="completed"))
        if input.note is not None:
            answer["task"].note = input.note
        return answer

    try:
        board, answer = change(ctx, scope, complete)
    except TaskError as exc:
        return task_refusal(exc)
    return ToolResult.from_text(
        update_text(answer), structured={"task": describe(answer["task"], board), "unblocked": answer["unblocked"]}
    )


@tool(name="TodoWrite", groups=["tasks", "pegboard"], usage="Keep a to-do list for multi-step work with TodoWrite.")
async def todo_write(input: TodoWriteInput, ctx: ToolContext) -> ToolResult:
    """Write the session's to-do list: the whole list at once, each item with content, status
    (pending, in_progress, completed) and activeForm. Keep one item in_progress at a time."""
    if ctx.session is None:
        return ToolResult.error("TodoWrite needs a session", error_kind="not_available")
    old = ctx.session.state[TODOS]
    ctx.session.state[TODOS] = list(input.todos)
    todos = [t.model_dump(mode="json") for t in input.todos]
    ctx.emit("tasks_changed", {"scope": "session", "todos": todos})
    counts = {s: sum(t.status == s for t in input.todos) for s in ("pending", "in_progress", "completed")}
    text = (
        "Todos have been modified successfully. "
        f"{counts['completed']} completed, {counts['in_progress']} in progress, {counts['pending']} pending."
    )
    if counts["in_progress"] > 1:
        text += " Note: more than one item is in progress; keep one at a time."
    return ToolResult.from_text(
        text, structured={"oldTodos": [t.model_dump(mode="json") for t in old], "newTodos": todos}
    )


TASK_TOOLS: tuple[Tool, ...] = (task_create, task_get, task_list, task_update, task_complete)


def family_tools() -> list[Tool]:
    """The tools of both families, each with its switch as its availability: one family is
    on, the other off, by the asking instance's environment and settings."""
    made = [dataclasses.replace(t, availability=task_tools_off) for t in TASK_TOOLS]
    made.append(dataclasses.replace(todo_write, availability=todo_write_off))
    return made


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, TasksSettings, description="The task tools and TodoWrite"))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    for made in family_tools():
        register(made)


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    store = pegboard.stash.pop(USER_STORE, None)
    if store is not None:
        store.close()


def session_tasks(session: Session) -> dict[str, Any]:
    """The session's tasks and to-dos (for ``pegboard sessions show``)."""
    board = session.state[TASKS]
    return {
        "tasks": [describe(t, board) for t in board.tasks.values()],
        "todos": [t.model_dump(mode="json") for t in session.state[TODOS]],
    }


__all__ = [
    "TASKS",
    "TODOS",
    "Task",
    "TaskBoard",
    "Todo",
    "session_tasks",
    "task_complete",
    "task_create",
    "task_get",
    "task_list",
    "task_update",
    "tasks_enabled",
    "todo_write",
]
