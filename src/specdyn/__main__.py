"""``python -m specdyn``."""

import sys

from specdyn.cli import main

sys.exit(main())
