"""``profet`` commands as real child processes, forked from a server that has imported the CLI.

Each ``python -m profet_core train ...`` pays about 2.5 CPU-s before its first line of work
(the interpreter, pandas, scikit-learn and SciPy imported again), more than the small trainings
the swap and write-rule tests run. :func:`run_cli` forks each command instead from a
``multiprocessing`` fork server that imported those modules once (a fresh single-threaded
interpreter, so forking it is safe). The command still runs in a process of its own: its own
environment, working directory, stdin (``/dev/null``), stdout and stderr (captured as text),
exit code, and ``PROFET_TEST_STOP_AT`` still SIGKILLs it for real (exit code -9, as
:mod:`subprocess` reports a signal). What it does not run is the interpreter's start and
``profet_core/__main__.py``, which the README's examples run as written.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import subprocess
import sys
import tempfile
import traceback
import types
from pathlib import Path

#: Imported once by the fork server: what ``train``, ``add-instance`` and ``predict`` load.
PRELOAD = (
    "profet_core.cli._main",
    "profet_core.training._train",
    "profet_core.training._add_instance",
    "profet_core.prediction",
)


@functools.cache
def _context():
    """The fork-server context (one per test process, its server started by the first command)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__, *PRELOAD])
    return ctx


def _child(argv: list[str], env: dict, cwd: str, out: str, err: str) -> None:
    """In the forked process: take the environment, folder and files, run ``main``, exit."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, out, os.O_WRONLY),
        (2, err, os.O_WRONLY),
    ):
        f = os.open(path, flags)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", closefd=False, encoding="utf-8")
    sys.stderr = open(2, "w", closefd=False, encoding="utf-8", errors="backslashreplace")
    sys.argv = ["profet", *argv]
    try:
        from profet_core.cli._main import main

        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors, as under `python -m profet_core`
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except BaseException:  # an uncaught error: a traceback and exit code 1, as Python does
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class CliProcess:
    """A started command (:func:`start_cli`): ``wait`` gives a ``CompletedProcess``."""

    def __init__(self, argv, env, cwd):
        self.args = ["profet", *argv]
        self._dir = tempfile.TemporaryDirectory(prefix="profet-cli-")
        self._out = Path(self._dir.name, "stdout")
        self._err = Path(self._dir.name, "stderr")
        self._out.touch()
        self._err.touch()
        spec = (argv, env, str(cwd), str(self._out), str(self._err))
        self._proc = _context().Process(target=_child, args=spec)
        # multiprocessing re-runs the parent's __main__ in the child (its file or module name);
        # after an AppTest that is the last page script it ran. The command needs none of it.
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            self._proc.start()
        finally:
            sys.modules["__main__"] = main

    def wait(self, timeout: float = 300) -> subprocess.CompletedProcess:
        """Wait for the command; raise ``subprocess.TimeoutExpired`` (after killing it) past
        ``timeout`` seconds, as :func:`subprocess.run` does."""
        self._proc.join(timeout)
        if self._proc.exitcode is None:
            self._proc.kill()
            self._proc.join()
            raise subprocess.TimeoutExpired(self.args, timeout)
        done = subprocess.CompletedProcess(
            self.args,
            self._proc.exitcode,
            self._out.read_text(encoding="utf-8", errors="replace"),
            self._err.read_text(encoding="utf-8", errors="replace"),
        )
        self._dir.cleanup()
        return done


def start_cli(*argv, env: dict | None = None, cwd=None) -> CliProcess:
    """Start ``profet *argv`` (each argument ``str``-ed) in a forked child; see the module."""
    env = dict(os.environ if env is None else env)
    return CliProcess([str(a) for a in argv], env, cwd or os.getcwd())


def run_cli(*argv, env: dict | None = None, cwd=None, timeout: float = 300):
    """Run ``profet *argv`` to its end: a ``subprocess.CompletedProcess`` with text output."""
    return start_cli(*argv, env=env, cwd=cwd).wait(timeout)
