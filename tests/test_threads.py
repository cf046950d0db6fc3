"""rankmap runs with one BLAS thread; the programs it starts get the user's settings."""

import os
import subprocess
import sys

from rankmap import threads


def test_limit_sets_every_variable_and_children_get_the_users_values_back(monkeypatch):
    monkeypatch.setattr(threads, "_USER_VALUES", {})
    for var in threads.BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "8")          # the user's own
    threads.limit_blas_threads()
    threads.limit_blas_threads()                        # twice: the user's value is kept
    for var in threads.BLAS_THREAD_VARIABLES:
        assert os.environ[var] == "1"                   # one thread inside rankmap, always
    env = threads.child_environ({"X_EXTRA": "y"})
    assert "OPENBLAS_NUM_THREADS" not in env and "MKL_NUM_THREADS" not in env
    assert env["OMP_NUM_THREADS"] == "8" and env["X_EXTRA"] == "y"
    # a value the program's caller sets explicitly wins
    assert threads.child_environ({"MKL_NUM_THREADS": "4"})["MKL_NUM_THREADS"] == "4"


def test_blas_threads_in_the_environment_do_not_change_the_output():
    """The user's OPENBLAS_NUM_THREADS does not reach rankmap's sums: the same output with
    any value (fuzz input 154,400: hop-bytes of fractional dragonfly routes differed in the
    last digits with 2 threads)."""
    cmd = [sys.executable, "-c", "import sys; from rankmap.cli import main; sys.exit(main())",
           "compare", "-m", "xc:groups=4:cores=4", "-p", "minimd", "--mappings", "random",
           "--format", "csv"]
    outs = []
    for n in ("1", "2"):
        env = {k: v for k, v in os.environ.items() if k not in threads.BLAS_THREAD_VARIABLES}
        env["OPENBLAS_NUM_THREADS"] = n
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == outs[1]


def test_command_line_loads_numpy_with_the_limit():
    """The variable is in place when the command modules first import numpy."""
    env = {k: v for k, v in os.environ.items() if k not in threads.BLAS_THREAD_VARIABLES}
    code = ("import os, sys\n"
            "seen = []\n"
            "class Spy:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'numpy' and not seen:\n"
            "            seen.append(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
            "        return None\n"
            "sys.meta_path.insert(0, Spy())\n"
            "from rankmap.cli import main\n"
            "assert 'numpy' not in sys.modules\n"
            "rc = main(['compare', '-m', 'torus:2x2', '-p', 'stencil:2x2'])\n"
            "print(rc, seen)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "0 ['1']"
