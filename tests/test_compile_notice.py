"""rankmap.cli.compile_notice: a first run that compiles the kernels says so once, on a
terminal, from the command's own process."""

from __future__ import annotations

import logging
import os
import pty
import subprocess
import sys
import textwrap

from rankmap.cli.compile_notice import (KERNEL_LOGGER, NOTICE, FirstCompileNotice,
                                        announce_compiles)
from rankmap.kernels.jit import LOGGER

#: one kernel compiled in a worker forked first, then two in the parent; stderr a terminal
_SCRIPT = textwrap.dedent("""\
    import os, sys
    sys.path.insert(0, sys.argv[1])
    from rankmap.cli.compile_notice import announce_compiles
    print('HANDLER', announce_compiles() is not None, flush=True)
    import numpy as np
    import notice_probe as k
    pid = os.fork()    # a worker forked before anything was compiled
    if pid == 0:
        k.third(np.arange(3.0))
        os._exit(0)
    os.waitpid(pid, 0)
    print('CHILD DONE', flush=True)
    k.first(np.arange(3.0)); k.second(np.arange(3.0))
    print('DONE', flush=True)
    """)

_MODULE = textwrap.dedent("""\
    from rankmap.kernels.jit import kernel

    @kernel
    def first(x):
        return x.sum()

    @kernel
    def second(x):
        return x.max()

    @kernel
    def third(x):
        return x.min()
    """)


def _on_a_terminal(folder) -> str:
    """Run :data:`_SCRIPT` with stdout and stderr on a pseudo-terminal; its output."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", _SCRIPT, str(folder)], stdout=slave,
                                stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:          # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=600) == 0
    finally:
        os.close(master)
    return b"".join(chunks).decode()


def test_the_first_compile_is_announced_once_and_never_by_a_worker(tmp_path):
    """Cold cache, stderr a terminal: the notice comes once for the parent's two compiles,
    not from a forked worker's compile; warm, it does not come at all."""
    (tmp_path / "notice_probe.py").write_text(_MODULE)
    cold = _on_a_terminal(tmp_path)
    assert "HANDLER True" in cold and "DONE" in cold
    assert cold.count(NOTICE) == 1
    assert cold.index("CHILD DONE") < cold.index(NOTICE)      # the parent's, after the child
    warm = _on_a_terminal(tmp_path)
    assert "DONE" in warm and NOTICE not in warm


def test_the_handler_prints_once_to_the_current_stderr_for_its_own_process(capsys):
    """One line for the first record; none for later ones, nor for another process's."""
    record = logging.LogRecord(KERNEL_LOGGER, logging.INFO, __file__, 1, "compiling %s",
                               ("x",), None)
    other = FirstCompileNotice(pid=os.getpid() + 1)
    other.emit(record)
    assert capsys.readouterr().err == ""
    mine = FirstCompileNotice()
    mine.emit(record)
    mine.emit(record)
    assert capsys.readouterr().err == NOTICE + "\n"


def test_nothing_is_announced_off_a_terminal_and_the_handler_is_added_once(monkeypatch):
    """Off a terminal no handler is added; on one, a single handler whatever the calls."""
    assert KERNEL_LOGGER == LOGGER.name
    logger = logging.getLogger(KERNEL_LOGGER)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        assert announce_compiles() is None               # pytest's captured stderr
        monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
        first = announce_compiles()
        assert isinstance(first, FirstCompileNotice)
        assert announce_compiles() is None
        assert sum(isinstance(h, FirstCompileNotice) for h in logger.handlers) == 1
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
