"""The README: its set-up commands are the ones CI runs, and its examples run."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _code_lines(text: str) -> list[str]:
    """The lines inside fenced code blocks."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if inside:
            lines.append(line.strip())
    return lines


def _readme_command(word: str) -> str:
    found = [ln for ln in _code_lines((ROOT / "README.md").read_text()) if
             ln.startswith("pip install") and word in ln]
    assert found, f"README.md has no code line that installs and runs {word!r}"
    return found[0]


def test_ci_runs_the_readme_test_command_verbatim():
    command = _readme_command("pytest")
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines, (f".ci/run must run the README's test command verbatim, "
                                 f"on a line of its own:\n  {command}")


def test_readme_setup_commands_come_first():
    text = (ROOT / "README.md").read_text()
    example = _readme_command("examples/train_digits.py")
    tests = _readme_command("pytest")
    assert example == 'pip install -e ".[dev]" && python examples/train_digits.py'
    setup = [ln for ln in _code_lines(text) if ln.startswith("pip install")]
    assert setup == [example, tests], f"exactly the two set-up commands, in order: {setup}"
    head = "\n".join(text.splitlines()[:30])
    assert example in head and tests in head, "the two set-up commands belong near the top"


def test_ci_ends_with_the_readme_test_command():
    # Inside `a && b`, set -e does not stop on a failing `a`: the script's exit status is
    # only right when this line is the last command.
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [ln for ln in lines if ln and not ln.startswith("#")]
    assert commands[-1] == _readme_command("pytest")


def test_ci_script_is_strict_and_executable():
    ci = ROOT / ".ci" / "run"
    assert ci.stat().st_mode & 0o111, ".ci/run must be executable"
    text = ci.read_text()
    assert text.startswith(("#!/usr/bin/env bash", "#!/bin/bash"))
    assert "set -euo pipefail" in text


def test_readme_python_examples_run(tmp_path, monkeypatch):
    # The tour's code blocks run in order, in one namespace, as a reader would paste them,
    # in a scratch directory (the Gluon tour saves parameters to a file).
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert blocks, "README.md has no python code blocks"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["x"].grad.asnumpy().tolist() == [18.0]
    assert (tmp_path / "net.params").is_file()
    params = list(namespace["net"].collect_params().values())
    assert params and all(p.list_ctx() == namespace["ctx"] for p in params)
