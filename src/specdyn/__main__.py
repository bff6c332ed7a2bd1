"""``python -m specdyn``."""

import sys

from specdyn.cli import console

sys.exit(console())
