"""Start-up: the top-level parser imports no command module, and its summaries are the
commands' own."""

import subprocess
import sys

from rankmap.cli import COMMANDS, build_parser, main


def test_summaries_equal_each_command_modules_own_help():
    full = build_parser("*")
    light = build_parser(None)
    (full_sub,) = [a for a in full._actions if a.dest == "command"]
    (light_sub,) = [a for a in light._actions if a.dest == "command"]
    full_help = {c.dest: c.help for c in full_sub._choices_actions}
    light_help = {c.dest: c.help for c in light_sub._choices_actions}
    assert list(full_help) == list(COMMANDS)
    assert light_help == full_help


def test_version_and_help_import_no_heavy_module():
    code = ("import sys; from rankmap.cli import main\n"
            "for argv in (['--version'], ['--help']):\n"
            "    try: main(argv)\n"
            "    except SystemExit: pass\n"
            "heavy = [m for m in ('numba', 'scipy', 'matplotlib', 'rankmap.machines') "
            "if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "HEAVY []" in out
    assert "compare" in out and "validate" in out  # every command listed


def test_unknown_command_is_one_line(capsys):
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "frobnicate" in err[0]
