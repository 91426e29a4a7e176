"""The one way the tests start the project's command line: ``python -m <module> ...`` with
this interpreter, torch on one thread, the output captured as text; in a process of its own
(:func:`run_command`, with a timeout) or, where the test needs no process, in the test
process (:func:`run_command_here`, see tests/in_process.py), the same command either way;
or, for a command that kills itself (the fault tests' SIGKILL), in a fork of the test
process (:func:`run_command_forked`), which has torch and Lightning imported already.

Tiny models gain nothing from intra-op threads and lose a lot under CPU contention, so every
start gets ``OMP_NUM_THREADS=1`` unless the test sets it itself.

No test measures time (speed is the benchmark's, ``python -m transformer_lab.bench``): a
deadline here only tells a hung process from a slow one, so it is :data:`HANG_SECONDS`
everywhere, long enough for the slowest command on a 2-core machine at a load of 10.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .in_process import run_in_process

HANG_SECONDS = 1800  # a command or a wait this long is hung, not slow (see above)


def one_thread_env(**variables: str) -> dict[str, str]:
    """This process's environment with ``OMP_NUM_THREADS=1``, then ``variables``."""
    return {**os.environ, "OMP_NUM_THREADS": "1", **variables}


def python_module(module: str, *arguments: str) -> list[str]:
    """The argv of ``python -m module *arguments``."""
    return [sys.executable, "-m", module, *arguments]


def python_code(code: str, hidden: Sequence[str] = ()) -> list[str]:
    """The argv of ``python -c code`` where the modules ``hidden`` cannot be imported, as on
    a system or an install without them (``sys.modules[name] = None`` makes ``import name``
    raise ImportError); ``code`` may use ``sys``."""
    hide = "".join(f"sys.modules[{name!r}] = None\n" for name in hidden)
    return [sys.executable, "-c", f"import sys\n{hide}{code}"]


def train_cli_code(*arguments: str) -> str:
    """Python code that runs ``python -m transformer_lab.train *arguments``, for
    :func:`python_code`: what that command runs, after whatever the code does first."""
    argv = ["transformer_lab.train", *arguments]
    return f"sys.argv = {argv!r}\nfrom transformer_lab.train import cli\ncli()\n"


def train_command(outputs_root: Path, *overrides: str) -> list[str]:
    """The argv of ``python -m transformer_lab.train *overrides paths.outputs_root=...``;
    a sweep's ``-m`` comes first in ``overrides``, as a user types it."""
    return python_module("transformer_lab.train", *overrides, f"paths.outputs_root={outputs_root}")


def run_command(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = HANG_SECONDS
) -> subprocess.CompletedProcess:
    """Run ``command`` in a process in ``cwd`` to its end; ``env`` adds to
    :func:`one_thread_env`."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=one_thread_env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sigint_as_in_a_terminal() -> None:
    """A child's SIGINT at its default (a process a shell started in the background inherits
    SIG_IGN); for a ``preexec_fn``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_command(command: list[str], cwd: Path, **popen: object) -> subprocess.Popen:
    """Start ``command`` in a process in ``cwd`` and return it running, for the tests that
    signal or kill it: output merged into one text pipe, and SIGINT at its default, as in a
    terminal (a process started in the background by a shell, as CI may start pytest,
    would otherwise inherit SIG_IGN); ``popen`` overrides any of these."""
    settings = {
        "env": one_thread_env(),
        "text": True,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "preexec_fn": sigint_as_in_a_terminal,
        **popen,
    }
    return subprocess.Popen(command, cwd=cwd, **settings)


def wait_until(
    process: subprocess.Popen, ready: Callable[[], bool], timeout: float = HANG_SECONDS
) -> None:
    """Wait, while ``process`` (from :func:`start_command`) runs, until ``ready()``: the
    moment a signal test sends its signal. Fails with the process's output if it ends
    first, and after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, process.stdout.read() if process.stdout else "it ended"
        assert time.monotonic() < deadline, f"not ready after {timeout} s"
        time.sleep(0.02)


def run_command_here(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, input: str | bytes = ""
) -> subprocess.CompletedProcess:
    """Run ``command`` in the test process as a process would, in ``cwd``, with ``input`` on
    its stdin, to its end; ``env`` adds to :func:`one_thread_env`."""
    return run_in_process(command, cwd, one_thread_env(**(env or {})), input)


def run_command_forked(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> int:
    """Run ``command`` as :func:`run_command_here` does, but in a fork of the test process,
    to its end: its exit status, ``-signal`` where a signal killed it (a process's
    ``returncode``). Its output is dropped. POSIX only (``os.fork``)."""
    pid = os.fork()
    if pid == 0:  # the child: the command, then out without the parent's exit handlers
        status = 1
        try:
            status = run_command_here(command, cwd, env).returncode
        finally:
            os._exit(status)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"{command} ran past {timeout} s")
        time.sleep(0.05)


def run_train(
    outputs_root: Path,
    *overrides: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = HANG_SECONDS,
) -> subprocess.CompletedProcess:
    """:func:`train_command` run in a process to its end, in ``cwd`` (the outputs root's
    parent unless given)."""
    command = train_command(outputs_root, *overrides)
    return run_command(command, cwd or outputs_root.parent, env, timeout)


def run_train_here(
    outputs_root: Path, *overrides: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """:func:`train_command` run in the test process to its end, in ``cwd`` (the outputs
    root's parent unless given)."""
    command = train_command(outputs_root, *overrides)
    return run_command_here(command, cwd or outputs_root.parent, env)
