"""``python -m simdask.cli``."""

import sys

from simdask.cli import main

sys.exit(main())
