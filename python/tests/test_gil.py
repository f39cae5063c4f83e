"""The GIL is released while faithful works, and Ctrl-C (KeyboardInterrupt) cancels a run."""

import signal
import threading
import time

import numpy as np
import pytest

import faithful_dr
from conftest import blobs

SPECS = ["tnc:k=10", "mrre:k=10", "srho"]


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
    # Two calls on one evaluator from two threads, both running while this thread ticks: the
    # results equal a lone call's, and no call holds the GIL (see above). Their wall-clock
    # speed-up needs two free cores and is not asserted (a busy machine gives none).
    high, low, _ = blobs(n=1500, d=8, seed=1)
    ev = faithful_dr.Evaluator(high, threads=1, backend="cpu")
    one = [s.values for s in ev.measure(low, SPECS).scores]
    results = []
    threads = [threading.Thread(target=lambda: results.append(ev.measure(low, SPECS).scores)) for _ in range(2)]
    ticks = []
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks.append(time.perf_counter())
    for t in threads:
        t.join()
    assert [[s.values for s in r] for r in results] == [one, one]
    gaps = np.diff(ticks)
    assert gaps.max() < 0.5 * (ticks[-1] - ticks[0]), gaps.max()


def test_keyboard_interrupt_cancels_a_long_run():
    high, low, _ = blobs(n=3000, d=8, seed=2)
    ev = faithful_dr.Evaluator(high, backend="cpu")
    timer = threading.Timer(0.5, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        # All-pairs rank statistics of 4.5 million pairs, 60 times over: a minute or more of
        # work uninterrupted (about 2 s a projection on a 2-core machine). Cancelled, it stops
        # at the next check, within a second or so.
        ev.measure_many({f"p{i}": low for i in range(60)}, ["srho", "nm_stress"])
    assert time.perf_counter() - t0 < 15
    timer.join()
    # The evaluator works again after the interrupt.
    assert 0.0 < ev.measure(low, ["tnc:k=5"]).scores[0]["trustworthiness"] <= 1.0
