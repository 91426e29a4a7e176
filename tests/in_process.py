"""A ``python -m <module> ...`` command run in the test process, as ``python -m`` runs it
(``runpy``, ``sys.argv``/``sys.orig_argv`` as typed, its working directory and environment,
its exit status), for the end-to-end tests that need no process of their own: a new process
pays seconds of CPU to import torch and Lightning before it does anything.

What the command changes in this process is put back afterwards, so that the tests after it
run as if it had run elsewhere: the logging setup that Hydra configures for a job (its
handlers, one of them appending to the job's train.log; the command starts, as a process
does, with no handler on the root logger), logger levels, warning filters, stdin,
SIGINT/SIGTERM handlers, the environment, the working directory, torch's threads and
deterministic mode, and the random generators.

A process differs in what it prints before and around our code: warnings reach its stderr,
and Lightning, imported where no logging is set up yet, gives its own logger a stderr
handler. Here warnings go to pytest and Lightning's lines to the root logger's handlers.
A test that reads the terminal for library notices (that a warning is absent, that a line
goes to the log and not to the terminal) therefore runs the command in a process.
"""

import io
import logging
import os
import random
import runpy
import signal
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import numpy
import torch
from hydra.core.global_hydra import GlobalHydra

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_in_process(
    command: list[str], cwd: Path, env: dict[str, str], input: str | bytes = ""
) -> subprocess.CompletedProcess:
    """``command`` (``[sys.executable, "-m", module, *arguments]``) run here to its end in
    ``cwd`` with the environment ``env`` and ``input`` on its stdin (text is written as
    UTF-8; bytes as they are, as a pipe gives them): what it wrote to stdout and stderr,
    and the exit status a process would have had."""
    python, dash_m, module, *arguments = command
    assert (python, dash_m) == (sys.executable, "-m"), command
    stdout, stderr = io.StringIO(), io.StringIO()
    with ExitStack() as stack:
        stack.enter_context(_put_back_afterwards(cwd, env, input))
        stack.enter_context(redirect_stdout(stdout))
        stack.enter_context(redirect_stderr(stderr))
        sys.orig_argv, sys.argv = list(command), [module, *arguments]  # argv[0]: runpy's
        returncode = _exit_status(module)
    return subprocess.CompletedProcess(command, returncode, stdout.getvalue(), stderr.getvalue())


def _exit_status(module: str) -> int:
    """Run ``module`` as ``__main__``; its exit status as the interpreter would set it."""
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            return exit.code or 0
        print(exit.code, file=sys.stderr)
        return 1
    except Exception:  # what the interpreter does with an exception that nothing caught
        traceback.print_exc()
        return 1
    return 0


@contextmanager
def _put_back_afterwards(cwd: Path, env: dict[str, str], input: str | bytes) -> Iterator[None]:
    argv, orig_argv, here, environ = sys.argv, sys.orig_argv, os.getcwd(), dict(os.environ)
    data = input if isinstance(input, bytes) else input.encode()
    stdin, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    loggers = _logging_state()
    root = logging.getLogger()
    for handler in [*root.handlers]:  # a new process has none (logging.basicConfig works)
        root.removeHandler(handler)
    handlers = {signum: signal.getsignal(signum) for signum in SIGNALS}
    threads = torch.get_num_threads()
    deterministic = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    generators = random.getstate(), numpy.random.get_state(), torch.get_rng_state()
    GlobalHydra.instance().clear()  # Hydra's entry point starts its own
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with warnings.catch_warnings():
            # python -m imports the module afresh; runpy warns that this process had it already
            warnings.filterwarnings("ignore", "'.*' found in sys.modules", RuntimeWarning)
            yield
    finally:
        GlobalHydra.instance().clear()
        random.setstate(generators[0])
        numpy.random.set_state(generators[1])
        torch.set_rng_state(generators[2])
        torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])
        torch.set_num_threads(threads)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        _restore_logging(loggers)
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        sys.argv, sys.orig_argv, sys.stdin = argv, orig_argv, stdin


def _all_loggers() -> list[logging.Logger]:
    named = logging.Logger.manager.loggerDict.values()
    return [logging.getLogger(), *(x for x in named if isinstance(x, logging.Logger))]


def _logging_state() -> dict[logging.Logger, tuple]:
    return {
        logger: (
            logger.level,
            logger.disabled,
            logger.propagate,
            [*logger.filters],
            [*logger.handlers],
        )
        for logger in _all_loggers()
    }


def _restore_logging(state: dict[logging.Logger, tuple]) -> None:
    """Every logger that was there as it was, and the handlers added since closed on every
    logger: left on, they would go on writing to the command's captured output or into its
    job's train.log."""
    before = {handler for *_, handlers in state.values() for handler in handlers}
    for logger in _all_loggers():
        added = [h for h in logger.handlers if h not in before]
        if logger in state:
            level, logger.disabled, logger.propagate, logger.filters, logger.handlers = state[
                logger
            ]
            logger.setLevel(level)
        for handler in added:
            logger.removeHandler(handler)
            handler.close()
