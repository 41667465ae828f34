"""``python -m simdask.cli``."""

import sys

from simdask.cli.main import main

sys.exit(main())
