"""``python -m rankmap``: the ``rankmap`` command, for environments without its script."""

import sys

from .cli import console

sys.exit(console())
