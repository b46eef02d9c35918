from ui.slack.state import RateLimiter, SeenEvents, ThreadSessions


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_seen_events_dedupes_within_ttl_then_forgets():
    clock = Clock()
    seen = SeenEvents(ttl_s=10, clock=clock)
    assert seen.first_time("Ev1") and not seen.first_time("Ev1")
    clock.t += 11
    assert seen.first_time("Ev2")  # expiry runs on access
    assert seen.first_time("Ev1")


def test_rate_limiter_per_user_and_per_channel():
    clock = Clock()
    lim = RateLimiter(per_user=2, per_channel=3, window_s=60, clock=clock)
    assert lim.allow("u1", "c1") and lim.allow("u1", "c1")
    assert not lim.allow("u1", "c1")  # user limit
    assert lim.allow("u2", "c1")
    assert not lim.allow("u3", "c1")  # channel limit
    assert lim.allow("u3", "c2")
    clock.t += 61
    assert lim.allow("u1", "c1")


def test_thread_sessions_keep_recent_turns_and_bound_threads():
    s = ThreadSessions(max_threads=2, max_turns=4)
    for i in range(3):
        s.add(("C", "1"), f"q{i}", f"a{i}")
    hist = s.history(("C", "1"))
    assert [t.content for t in hist] == ["q1", "a1", "q2", "a2"]
    s.add(("C", "2"), "x", "y")
    s.add(("C", "3"), "x", "y")
    assert not s.known(("C", "1")) and s.known(("C", "3"))


def test_rate_limiter_tells_a_user_once_per_window():
    clock = Clock()
    lim = RateLimiter(per_user=1, window_s=10, clock=clock)
    assert lim.tell("u1") and not lim.tell("u1") and lim.tell("u2")
    clock.t += 11
    assert lim.tell("u1")


def test_thread_turns_run_in_arrival_order():
    import threading
    import time

    from ui.slack.state import ThreadTurns

    turns, order = ThreadTurns(max_wait_s=5), []
    first, second = turns.take("t"), turns.take("t")

    def run(turn, delay):
        time.sleep(delay)
        turns.wait("t", turn)
        order.append(turn)
        turns.finish("t", turn)

    threads = [threading.Thread(target=run, args=(second, 0.0)), threading.Thread(target=run, args=(first, 0.3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == [first, second] and turns.take("t") == 0  # a finished thread is forgotten
