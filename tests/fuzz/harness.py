"""Run the ``rankmap`` command line in-process (or in a subprocess) and check the contract.

The contract (README, "Limits and guarantees"): a command either exits 0 with a valid result
or exits 2 with exactly one line on stderr; never a traceback, a hang, a memory blow-up, NaN
or infinity in an output, or a leftover temporary file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass, field

#: seconds one command may take before it counts as a hang (generous: the first calls of a
#: fresh checkout compile numba kernels; the hangs this catches ran for minutes).
TIMEOUT_S = float(os.environ.get("RANKMAP_FUZZ_TIMEOUT", "300"))
#: address-space limit of subprocess runs (bytes).
MEMORY_LIMIT = int(os.environ.get("RANKMAP_FUZZ_MEMORY", str(6 << 30)))

#: a warning printed by the interpreter's default handler ("file:line: Category: message").
_PRINTED_WARNING = re.compile(r"^.*:\d+: \w*Warning: ", re.MULTILINE)
#: a NaN or infinity printed as a number, not inside a quoted string: JSON names a host "inf"
#: in quotes (a table prints it bare, and is still flagged: a number and a name look alike)
_NONFINITE = re.compile(r"""(?<![\w."'])[-+]?(nan|inf|infinity)(?![\w"'])""", re.IGNORECASE)


class Hang(BaseException):
    """Raised by the alarm when an in-process command runs past :data:`TIMEOUT_S`."""


@dataclass
class Result:
    argv: list[str]
    code: int | None
    out: str
    err: str
    crash: str | None = None          # traceback of an exception that escaped main()
    warnings: list[str] = field(default_factory=list)
    cpu_s: float = 0.0                # CPU time of the child (fork server and subprocess runs)


def _alarm(signum, frame):
    raise Hang()


def run_cli(argv: list[str], env: dict | None = None, timeout: float = TIMEOUT_S) -> Result:
    """Call ``rankmap.cli.main(argv)`` with captured stdout/stderr, extra environment
    variables and a wall-clock alarm."""
    from rankmap.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    code, crash = None, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except Hang:
            crash = f"hang: more than {timeout:.0f} s"
        except BaseException:  # noqa: BLE001 - any escape is a contract failure
            crash = traceback.format_exc()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    shown = [f"{w.category.__name__}: {w.message}" for w in caught
             if issubclass(w.category, RuntimeWarning)]
    return Result(list(argv), code, out.getvalue(), err.getvalue(), crash, shown)


def run_subprocess(argv: list[str], env: dict | None = None, timeout: float = TIMEOUT_S,
                   memory: int = MEMORY_LIMIT, cwd: str | None = None) -> Result:
    """Run ``python -m rankmap.cli ARGV`` in a child with an address-space limit."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    full_env = {**os.environ, **(env or {})}
    code = [sys.executable, "-c", "import sys; from rankmap.cli import main; "
            "sys.exit(main(sys.argv[1:]))", *argv]
    try:
        p = subprocess.run(code, capture_output=True, text=True, timeout=timeout, env=full_env,
                           preexec_fn=limit, cwd=cwd)
    except subprocess.TimeoutExpired:
        return Result(list(argv), None, "", "", f"hang: more than {timeout:.0f} s")
    crash = p.stderr if "Traceback" in p.stderr or "MemoryError" in p.stderr else None
    return Result(list(argv), p.returncode, p.stdout, p.stderr, crash)


def problems(res: Result, folder: str | None = None) -> list[str]:
    """Every way ``res`` breaks the contract (empty when it holds)."""
    bad = []
    if res.crash:
        bad.append(f"escaped: {res.crash.strip().splitlines()[-1]}")
        return bad
    if res.code not in (0, 2):
        bad.append(f"exit status {res.code}")
    err_lines = [ln for ln in res.err.splitlines() if ln.strip()]
    if res.code == 2 and len(err_lines) != 1:
        bad.append(f"exit 2 with {len(err_lines)} lines on stderr")
    if "Traceback" in res.err:
        bad.append("traceback on stderr")
    if "out of memory" in res.err:
        bad.append("out of memory (a size was not capped)")
    if "CPU time limit reached" in res.err:
        bad.append("hang: a worker process reached the CPU time limit")
    if "internal error" in res.err:
        bad.append("internal error")
    if any(len(ln) > 600 for ln in err_lines):
        bad.append("an error line over 600 characters")
    if res.warnings:
        bad.append(f"warning leaked: {res.warnings[0]}")
    elif _PRINTED_WARNING.search(res.err):
        bad.append(f"warning leaked: {_PRINTED_WARNING.search(res.err).group(0)[-80:]}")
    if res.code == 0:
        if _NONFINITE.search(res.out) or _NONFINITE.search(res.err):
            bad.append("NaN or infinity in the output")
        if "--format" in res.argv and res.argv[res.argv.index("--format") + 1:][:1] == ["json"]:
            try:
                json.loads(res.out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except ValueError as exc:
                bad.append(f"invalid JSON: {exc}")
    if folder is not None:
        left = [f for f in os.listdir(folder) if f.startswith(".rankmap-")]
        if left:
            bad.append(f"temporary file left: {left[0]}")
    return bad


def describe(res: Result, issues: list[str]) -> str:
    """A one-paragraph failure report for an assertion message."""
    return (f"rankmap {' '.join(res.argv)!s:.300}\n  -> {', '.join(issues)}\n  stderr: "
            f"{(res.crash or res.err).strip()[-800:]}")
