"""Running a docs block's commands as a reader would: shell lines through bash, ``python -m
transformer_lab.<command>`` lines in the test process (a new process pays seconds to import
torch), each in the folder the example works in."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

from ..command_line import one_thread_env, python_module, run_command, run_command_here

PYTHON_M = re.compile(r"^python -m (transformer_lab\.\w+)(.*)$", re.DOTALL)


def logical_lines(script: str) -> list[str]:
    """``script``'s commands: continuation lines joined, a heredoc kept with its command."""
    commands, lines = [], iter(script.strip("\n").split("\n"))
    for line in lines:
        while line.endswith("\\"):
            line = line[:-1].rstrip() + " " + next(lines).strip()
        heredoc = re.search(r"<<-?'?(\w+)'?", line)
        if heredoc:
            body = []
            for following in lines:
                body.append(following)
                if following.strip() == heredoc[1]:
                    break
            line = "\n".join([line, *body])
        commands.append(line)
    return commands


def shell(command: str, cwd: Path) -> str:
    """A shell command through bash, ``python`` being this interpreter; its stdout."""
    script = re.sub(r"(^|[|;&]\s*)python(?=\s)", rf"\1{sys.executable}", command)
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, capture_output=True, text=True, env=one_thread_env()
    )
    assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    return done.stdout


def run(command: str, cwd: Path, *extra: str, process: bool = False):
    """One line of a block: ``[<shell> |] python -m transformer_lab.<x> <arguments>`` with
    the ``extra`` arguments after the block's (its stdin the shell's output), or a shell
    line (None then). ``process``: in a process of its own, to print what a terminal shows."""
    stdin, python = "", command.strip()
    if not PYTHON_M.match(python) and "| python -m " in command:
        stdin, _, python = command.rpartition("| ")
    found = PYTHON_M.match(python.strip())
    if not found:
        shell(command, cwd)
        return None
    argv = python_module(found[1], *shlex.split(found[2]), *extra)
    if process:
        assert not stdin, command
        return run_command(argv, cwd)
    return run_command_here(argv, cwd, input=shell(stdin, cwd) if stdin else "")


def transcript(block: str, cwd: Path, stdout: bool = False) -> str:
    """A block of ``$ <command>`` lines, each followed by what it prints as the block shows
    it: its ``error:``/``warning:`` lines, after its output where ``stdout`` (generate's);
    each command run in ``cwd``."""
    lines = []
    for line in block.split("\n"):
        if not line.startswith("$ "):
            continue
        lines.append(line)
        done = run(line[2:], cwd)
        if done is None:
            continue
        lines += done.stdout.rstrip("\n").split("\n") if stdout and done.stdout.strip() else []
        said = ("error:", "warning:")
        lines += [out for out in done.stderr.split("\n") if out.startswith(said)]
    return "\n".join(lines)
