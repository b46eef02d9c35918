"""The bot's memory: thread conversations, seen events and rate limits. Bounded, thread-safe."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Callable

from assistant.answer import Turn

Clock = Callable[[], float]


@dataclass
class ThreadSessions:
    """A Slack thread is a conversation: its turns feed follow-up questions."""

    max_threads: int = 2000
    max_turns: int = 12
    _turns: OrderedDict = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def history(self, key: tuple[str, str]) -> tuple[Turn, ...]:
        with self._lock:
            return tuple(self._turns.get(key, ()))

    def known(self, key: tuple[str, str]) -> bool:
        with self._lock:
            return key in self._turns

    def open(self, key: tuple[str, str]) -> None:
        """A thread we are answering: its follow-ups are ours even before the first answer is posted."""
        with self._lock:
            if key not in self._turns:
                self._turns[key] = []
                while len(self._turns) > self.max_threads:
                    self._turns.popitem(last=False)

    def add(self, key: tuple[str, str], question: str, answer: str) -> None:
        with self._lock:
            turns = self._turns.pop(key, [])
            turns = (turns + [Turn("user", question), Turn("assistant", answer)])[-self.max_turns :]
            self._turns[key] = turns
            while len(self._turns) > self.max_threads:
                self._turns.popitem(last=False)


@dataclass
class SeenEvents:
    """Slack may deliver one event several times (retries, a mention that is also a message)."""

    ttl_s: float = 600.0
    max_items: int = 10000
    clock: Clock = time.monotonic
    _seen: OrderedDict = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def first_time(self, key: str) -> bool:
        now = self.clock()
        with self._lock:
            while self._seen and (next(iter(self._seen.values())) < now - self.ttl_s or len(self._seen) > self.max_items):
                self._seen.popitem(last=False)
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


@dataclass
class RateLimiter:
    """Sliding-window limits per user and per channel."""

    per_user: int = 6
    per_channel: int = 30
    window_s: float = 60.0
    clock: Clock = time.monotonic
    _hits: dict = field(default_factory=dict)
    _told: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def tell(self, user: str) -> bool:
        """Whether a refused user should be told now: once per window, then quiet."""
        now = self.clock()
        with self._lock:
            last = self._told.get(user)
            if last is not None and last > now - self.window_s:
                return False
            self._told[user] = now
            if len(self._told) > 10000:  # bounded: forget the oldest
                self._told.pop(next(iter(self._told)))
            return True

    def allow(self, user: str, channel: str) -> bool:
        now = self.clock()
        keys = ((f"u:{user}", self.per_user), (f"c:{channel}", self.per_channel))
        with self._lock:
            for key, _ in keys:
                q = self._hits.setdefault(key, deque())
                while q and q[0] <= now - self.window_s:
                    q.popleft()
            if any(len(self._hits[key]) >= limit for key, limit in keys):
                return False
            for key, _ in keys:
                self._hits[key].append(now)
            return True


@dataclass
class ThreadTurns:
    """Answers in one thread go out in the order their questions arrived: each question takes a turn
    when it is received, and waits for the turns before it (at most `max_wait_s`, so a lost turn
    cannot block a thread for good)."""

    max_wait_s: float = 120.0
    _next: dict = field(default_factory=dict)  # key -> next turn to hand out
    _serving: dict = field(default_factory=dict)  # key -> turns below this are finished
    _done: dict = field(default_factory=dict)  # key -> finished turns above _serving
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def take(self, key) -> int:
        with self._cond:
            turn = self._next.get(key, 0)
            self._next[key] = turn + 1
            self._serving.setdefault(key, 0)
            return turn

    def wait(self, key, turn: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._serving.get(key, 0) >= turn, timeout=self.max_wait_s)

    def finish(self, key, turn: int) -> None:
        with self._cond:
            done = self._done.setdefault(key, set())
            done.add(turn)
            while self._serving.get(key, 0) in done:
                done.discard(self._serving[key])
                self._serving[key] += 1
            if self._serving.get(key, 0) >= self._next.get(key, 0):  # nothing pending: forget the thread
                for table in (self._next, self._serving, self._done):
                    table.pop(key, None)
            self._cond.notify_all()
