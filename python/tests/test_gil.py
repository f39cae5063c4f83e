"""The GIL is released while faithful works, and Ctrl-C (KeyboardInterrupt) cancels a run."""

import linecache
import signal
import sys
import threading
import time

import numpy as np
import pytest

import faithful_dr
from conftest import blobs

SPECS = ["tnc:k=10", "mrre:k=10", "srho"]
# Row-pass measures only (no O(n²) memory): one call takes about a second with one thread.
GIL_SPECS = ["tnc:k=20", "mrre:k=20", "lcmc:k=20"]
GIL_N = 12000


def test_python_runs_while_faithful_works():
    # Were the GIL held during a call, this thread's Python loop would stall for the whole
    # call; released, it keeps ticking (gaps of a few switch intervals at most).
    high, low, _ = blobs(n=2500, d=8, seed=1)
    ev = faithful_dr.Evaluator(high, threads=1, backend="cpu")
    worker = threading.Thread(target=ev.measure, args=(low, SPECS))
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    call = ticks[-1] - ticks[0]
    gaps = np.diff(ticks)
    assert call > 0.05 and gaps.max() < 0.5 * call, (call, gaps.max())


def test_two_threads_measure_at_once():
    # Two calls on one evaluator from two threads at once: both results equal a lone call's.
    high, low, _ = blobs(n=1500, d=8, seed=1)
    ev = faithful_dr.Evaluator(high, threads=1, backend="cpu")
    one = [s.values for s in ev.measure(low, SPECS).scores]
    results = []
    threads = [threading.Thread(target=lambda: results.append(ev.measure(low, SPECS).scores)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [[s.values for s in r] for r in results] == [one, one]


def test_two_native_calls_are_in_flight_at_once():
    # With the GIL held by a native call, a second thread could not even enter its own call,
    # nor could this thread look: seeing both worker threads inside the native call at the
    # same moment shows that each call releases the GIL. (How fast two calls run side by side
    # is a benchmark's question, not a test's: machines are shared and noisy.)
    high, low, _ = blobs(n=2500, d=8, seed=1)
    ev = faithful_dr.Evaluator(high, threads=1, backend="cpu")
    one = [s.values for s in ev.measure(low, SPECS).scores]
    done = threading.Event()
    results = []

    def work():
        # Calls repeated until both were seen inside at once (or 60 s passed): no scheduling
        # order can make the two calls miss each other for ever.
        while not done.is_set():
            res = ev.measure_many({"a": low, "b": low}, SPECS)
            results.append([[s.values for s in scores] for scores in res.projections.values()])

    workers = [threading.Thread(target=work) for _ in range(2)]
    for w in workers:
        w.start()
    t0 = time.monotonic()
    both = False
    try:
        while not both and time.monotonic() - t0 < 60:
            both = all(_in_native_call(w.ident, "measure_many") for w in workers)
    finally:
        done.set()
        for w in workers:
            w.join()
    assert both, "never saw two native calls in flight at once"
    assert results and all(r == [one, one] for r in results)


def _in_native_call(thread_id, method):
    """Whether thread `thread_id` is executing the native call of `faithful_dr.Evaluator.method`
    (its innermost Python frame is that method, on the line that calls `_native.method`). Seen
    from another thread, which runs only while the GIL is free: the native call released it."""
    frame = sys._current_frames().get(thread_id)
    if frame is None or frame.f_code.co_name != method or not frame.f_code.co_filename.endswith("evaluator.py"):
        return False
    return f"_native.{method}(" in linecache.getline(frame.f_code.co_filename, frame.f_lineno)


def test_keyboard_interrupt_cancels_a_long_run():
    high, low, _ = blobs(n=3000, d=8, seed=2)
    ev = faithful_dr.Evaluator(high, backend="cpu")
    main = threading.get_ident()
    returned = threading.Event()
    log = []

    def interrupt_until_it_stops():
        # SIGINT to the main thread only once the run is known to be inside the native call
        # (not while its inputs are converted, nor before it starts on a busy machine), and
        # again every 0.25 s until the call has returned: no scheduling delay can lose it.
        t0 = time.monotonic()
        while not returned.is_set() and not _in_native_call(main, "measure_many"):
            if time.monotonic() - t0 > 60:
                log.append("never seen inside the native call")
                return
            time.sleep(0.002)
        while not returned.is_set():
            log.append(f"SIGINT at {time.monotonic() - t0:.3f} s")
            signal.pthread_kill(main, signal.SIGINT)
            returned.wait(0.25)

    def on_sigint(signum, frame):
        # KeyboardInterrupt as Python's default handler raises it, but only while the call
        # runs: a signal still in flight when it has returned is dropped.
        if not returned.is_set():
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    watcher = threading.Thread(target=interrupt_until_it_stops, daemon=True)
    t0 = time.perf_counter()
    try:
        watcher.start()
        with pytest.raises(KeyboardInterrupt):
            try:
                # All-pairs rank statistics of 4.5 million pairs, 60 times over: a minute or
                # more of work uninterrupted (about 2 s a projection on a 2-core machine).
                # Cancelled, it stops at the next check, within a second or so.
                ev.measure_many({f"p{i}": low for i in range(60)}, ["srho", "nm_stress"])
            finally:
                returned.set()
    finally:
        returned.set()
        watcher.join()
        signal.signal(signal.SIGINT, previous)
    assert log and log[0].startswith("SIGINT"), log
    assert time.perf_counter() - t0 < 15, log
    # The evaluator works again after the interrupt.
    assert 0.0 < ev.measure(low, ["tnc:k=5"]).scores[0]["trustworthiness"] <= 1.0


def test_the_native_call_is_recognised():
    # The helper above must see a real native call (else the interrupt test could wait for a
    # frame that never comes): a one-thread call on a second thread, watched from this one.
    high, low, _ = blobs(n=2500, d=8, seed=1)
    ev = faithful_dr.Evaluator(high, threads=1, backend="cpu")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(ev.measure_many({"low": low}, SPECS)))
    worker.start()
    inside = False
    while worker.is_alive() and not inside:
        inside = _in_native_call(worker.ident, "measure_many")
    worker.join()
    assert inside and seen
