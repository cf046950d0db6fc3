"""``python -m rankmap``: the ``rankmap`` command, for environments without its script."""

import sys

from .cli import console

if __name__ == "__main__":
    sys.exit(console())
