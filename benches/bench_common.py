"""Shared by benches/peers.py and benches/zadu_compare.py: the data generator and running a
command in its own process with its wall time and peak RSS. Standard library only."""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = os.path.join(REPO, "tests", "fixtures", "generate.py")


def load_generator():
    """tests/fixtures/generate.py as a module (make_dataset); needs numpy."""
    import importlib.util

    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("faithful_fixture_generate", GENERATOR)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def maxrss_to_mib(raw):
    """ru_maxrss in MiB: Linux reports KiB, macOS bytes."""
    if sys.platform == "darwin":
        return raw / (1024.0 * 1024.0)
    return raw / 1024.0


def run_measured(cmd, log_prefix=None, timeout=None, env=None):
    """Runs cmd in its own process; returns (exit code, wall seconds, peak RSS MiB, stdout,
    stderr). With `log_prefix`, stdout and stderr are kept in `<prefix>.stdout/.stderr`."""

    def sink(suffix):
        if log_prefix:
            return open(log_prefix + suffix, "w+b")
        return tempfile.TemporaryFile()

    with sink(".stdout") as out, sink(".stderr") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        timer = None
        if timeout:
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
        stderr = err.read().decode("utf-8", errors="replace")
    return proc.returncode, wall, maxrss_to_mib(usage.ru_maxrss), stdout, stderr


def write_outputs(text, markdown_path, json_path, payload):
    """Prints the report, and writes it as Markdown and `payload` as JSON where asked."""
    print(text)
    if markdown_path:
        with open(markdown_path, "w") as f:
            f.write(text)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(payload, f, indent=1)
