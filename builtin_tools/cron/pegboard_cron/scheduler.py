"""The scheduler: delivers due jobs to their sessions through the ``deliver_message`` hook.

One ``Scheduler`` per ``Pegboard`` (``scheduler(pb)``) watches the sessions that are open in
this process. It runs as one asyncio task on the event loop the sessions were opened in and
sleeps until the next job is due (at most ``max_nap`` seconds, so jobs other processes add
are seen). It stops when the last watched session closes and in ``pegboard_close``; a
process without an event loop starts nothing and may call :meth:`Scheduler.tick` itself.

A run is claimed in one store transaction before it is delivered, so two processes that
have the same session open never deliver it twice. A run that came due while its session
was closed is delivered once when the session opens again, marked late; runs missed in
between are not made up. Time comes from ``scheduler.clock``: tests put a
:class:`ManualClock` there and move it with ``advance``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Protocol

from pegboard import MessageDelivery, Pegboard, Session, StashKey, ask_host, has_host_service
from pegboard_cron.jobs import JOBS, LATE_AFTER, MAX_RUNS_KEPT, Job, Run, RunStatus, iso, ms

if TYPE_CHECKING:
    import asyncio

SCHEDULER: StashKey[Scheduler] = StashKey("pegboard-cron-scheduler")
DEFAULT_MAX_NAP = 60.0
MAX_ERRORS = 50


class Clock(Protocol):
    """Wall-clock time (epoch seconds) and a way to wait."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    """The real clock: ``time.time`` and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that moves only when told to: ``advance(seconds)`` wakes every sleeper whose
    time has come. For tests, which then run in milliseconds."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    @property
    def sleepers(self) -> int:
        """How many ``sleep`` calls are waiting (a test advances once the scheduler sleeps)."""
        with self._lock:
            return sum(1 for _deadline, future in self._sleepers if not future.done())

    async def until_asleep(self) -> None:
        """Return once something sleeps on this clock."""
        import asyncio

        while not self.sleepers:
            await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
            due = [s for s in self._sleepers if s[0] <= self._now]
            self._sleepers = [s for s in self._sleepers if s[0] > self._now]
        for _deadline, future in due:
            loop = future.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)

    async def sleep(self, seconds: float) -> None:
        import asyncio

        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._sleepers.append((self._now + seconds, future))
        await future


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(frozen=True)
class Fired:
    """One delivered (or failed) run."""

    session_id: str
    job_id: str
    due: float
    ran: float
    late: bool
    status: str
    error: str | None = None


class Scheduler:
    """Delivers the due jobs of the watched sessions; see the module docstring."""

    def __init__(self, pegboard: Pegboard, clock: Clock | None = None, tz: tzinfo | None = None) -> None:
        self.pegboard = pegboard
        self.clock: Clock = clock or WallClock()
        #: the zone of cron expressions and times without their own (``None``: the machine's)
        self.tz = tz
        self.max_nap = DEFAULT_MAX_NAP
        #: ``False``: never start the task; the host (or a test) calls :meth:`tick` itself
        self.autostart = True
        self.errors: list[str] = []
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._closed = False

    # -- sessions ----------------------------------------------------------------------------
    def can_deliver(self) -> bool:
        return has_host_service(self.pegboard, "deliver_message")

    def watch(self, session: Session) -> None:
        """Deliver ``session``'s jobs while it is open (starts the task when there is a loop)."""
        if session.closed or self._closed:
            return
        with self._lock:
            known = self._sessions.get(session.id)
            if known is None or known.closed:
                self._sessions[session.id] = session
                session.on_close(_Forget(self, session))
        self.start()

    def sessions(self) -> list[Session]:
        with self._lock:
            return [s for s in self._sessions.values() if not s.closed]

    def _forget(self, session: Session) -> bool:
        """Stop watching ``session``; whether no session is left."""
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]
            return not self._sessions

    # -- the task ----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the task on the running event loop when a watched session has jobs; wake it
        when it runs already (a job was added or changed)."""
        if self.running:
            self.poke()
            return
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if not self.autostart or self._closed or not self.can_deliver() or not any(_jobs(s) for s in self.sessions()):
            return
        self._wake = asyncio.Event()
        self._task = loop.create_task(self._run(), name="pegboard-cron-scheduler")

    def poke(self) -> None:
        """Wake the task to look at the jobs again (from any thread)."""
        task, wake = self._task, self._wake
        if task is None or wake is None or task.done():
            return
        loop = task.get_loop()
        if loop.is_closed():
            return
        try:
            import asyncio

            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    async def stop(self) -> None:
        """Cancel the task and wait for it to end (when it runs on this loop)."""
        import asyncio

        task = self._task
        self._task = None
        if task is None or task.done():
            return
        loop = task.get_loop()
        try:
            same = asyncio.get_running_loop() is loop
        except RuntimeError:
            same = False
        if same:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    def close(self) -> None:
        """For ``pegboard_close``: stop for good without starting an event loop."""
        self._closed = True
        task = self._task
        self._task = None
        with self._lock:
            self._sessions.clear()
        if task is not None and not task.done():
            loop = task.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(task.cancel)

    async def _run(self) -> None:
        import asyncio

        me = asyncio.current_task()
        try:
            while not self._closed and self.sessions():
                await self.tick()
                try:
                    due = self.next_due()
                    if due is None and not any(_jobs(s) for s in self.sessions()):
                        return
                    wait = self.max_nap if due is None else min(self.max_nap, max(0.0, due - self.clock.now()))
                except Exception as exc:  # the store failed: try again after a nap
                    self._note(f"reading the jobs failed: {type(exc).__name__}: {exc}")
                    wait = self.max_nap
                await self._nap(wait)
        finally:
            if self._task is me:
                self._task = None

    async def _nap(self, seconds: float) -> None:
        import asyncio

        wake = self._wake
        if wake is None:
            return
        wake.clear()
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        waker = asyncio.ensure_future(wake.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (sleeper, waker):
                pending.cancel()
            await asyncio.gather(sleeper, waker, return_exceptions=True)

    def _note(self, error: str) -> None:
        """Keep what went wrong (the last ``MAX_ERRORS``) for a host to show; never raise it."""
        self.errors = [*self.errors, error][-MAX_ERRORS:]

    # -- runs --------------------------------------------------------------------------------
    def next_due(self) -> float | None:
        """The earliest time a job of a watched session is due, or ``None``."""
        times = [j.next_run for s in self.sessions() for j in _jobs(s) if j.enabled and j.next_run is not None]
        return min(times) if times else None

    async def tick(self, now: float | None = None) -> list[Fired]:
        """Deliver every job that is due by ``now`` (default: the clock's time) in every watched
        session; what a host without an event loop, or a test, calls."""
        fired: list[Fired] = []
        for session in self.sessions():
            try:
                fired += await self.run_due(session, now)
            except Exception as exc:
                self._note(f"session {session.id}: {type(exc).__name__}: {exc}")
        return fired

    async def run_due(self, session: Session, now: float | None = None) -> list[Fired]:
        if not self.can_deliver():
            return []
        moment = self.clock.now() if now is None else now
        fired = []
        for job in _jobs(session):
            if job.enabled and job.next_run is not None and job.next_run <= moment:
                claimed = self._claim(session, job.id, moment)
                if claimed is not None:
                    fired.append(await self._deliver(session, claimed[0], claimed[1], moment))
        return fired

    async def run_now(self, session: Session, job_id: str) -> Fired | None:
        """Deliver job ``job_id`` at once, whenever it is due (``cron run``); ``None`` if there
        is no such job."""
        moment = self.clock.now()
        claimed = self._claim(session, job_id, moment, force=True)
        if claimed is None:
            return None
        return await self._deliver(session, claimed[0], claimed[1], moment)

    def _claim(self, session: Session, job_id: str, now: float, *, force: bool = False) -> tuple[Job, float] | None:
        """Take one run of the job in one transaction: advance (or finish) its schedule and
        return the job as it was with the time the run was due; ``None`` if it is not due
        (another process took it) or expired (it is removed)."""
        box: dict[str, Any] = {}

        def step(current: Job | None) -> Job | None:
            box.pop("claim", None)  # the store may call this again with a newer job: its answer counts
            if current is None:
                return None
            due = current.next_run
            if not force:
                if not current.enabled or due is None or due > now:
                    return current
                if current.expires is not None and now >= current.expires:
                    return None
            box["claim"] = (current, due if not force and due is not None else now)
            following: float | None = None
            if force and due is not None and due > now:
                following = due
            elif current.recurring:
                following = current.following(now, self.tz)
                if following is not None and current.expires is not None and following > current.expires:
                    following = None
            if following is None and (current.delete_after_run or current.source != "cron"):
                return None
            return current.model_copy(update={"next_run": following, "last_run": now})

        session.state.map(JOBS).update(job_id, step)
        claim: tuple[Job, float] | None = box.get("claim")
        return claim

    async def _deliver(self, session: Session, job: Job, due: float, now: float) -> Fired:
        late = now - due >= LATE_AFTER
        tz = job.zone(self.tz)
        text = job.prompt
        if late:
            text += (f"\n\n(Scheduled job {job.id} was due at {iso(due, tz)}; it runs late, at {iso(now, tz)}, "
                     "because the session was not open or busy then.)")
        delivery = MessageDelivery(
            session.id, text, sender=f"cron:{job.id}", wait=0, kind="prompt",
            metadata={"job_id": job.id, "source": job.source, "name": job.name, "payload": job.payload_kind,
                      "due": iso(due, tz), "dueAtMs": ms(due), "late": late, "recurring": job.recurring},
        )
        sel = session.selection
        ctx = self.pegboard.context(
            cwd=session.cwd, mode=session.mode, additional_dirs=session.additional_dirs, session_id=session.id,
            session=session, agent=sel.agent, subagent=sel.subagent, provider=sel.provider, model=sel.model,
            profile=sel.profile,
        )
        status: RunStatus = "delivered"
        error: str | None = None
        try:
            answer = await ask_host(ctx, "deliver_message", request=delivery)
            if answer is None or answer is False:
                status = "not_delivered"
        except Exception as exc:
            status, error = "error", f"{type(exc).__name__}: {exc}"
        run = Run(due=due, ran=now, late=late, status=status, error=error)

        def record(current: Job | None) -> Job | None:
            if current is None:
                return None
            return current.model_copy(update={"runs": [*current.runs, run][-MAX_RUNS_KEPT:]})

        session.state.map(JOBS).update(job.id, record)
        session.emit("cron_fired", {"job_id": job.id, "due": iso(due, tz), "late": late, "status": status})
        return Fired(session.id, job.id, due, now, late, status, error)


class _Forget:
    """The close callback of one watched session."""

    def __init__(self, scheduler: Scheduler, session: Session) -> None:
        self.scheduler = scheduler
        self.session = session

    async def __call__(self) -> None:
        if self.scheduler._forget(self.session):
            await self.scheduler.stop()
        else:
            self.scheduler.poke()


def _jobs(session: Session) -> list[Job]:
    return [job for _id, job in session.state.map(JOBS).items()]


def scheduler(pegboard: Pegboard) -> Scheduler:
    """The scheduler of ``pegboard`` (made on first use)."""
    found: Scheduler | None = pegboard.stash.get(SCHEDULER)
    if found is None:
        found = pegboard.stash.setdefault(SCHEDULER, Scheduler(pegboard))
    return found


__all__ = ["SCHEDULER", "Clock", "Fired", "ManualClock", "Scheduler", "WallClock", "scheduler"]
