"""``python -m rfexplain``: the command line (:mod:`rfexplain.cli`)."""

import sys

from rfexplain.cli import main

sys.exit(main())
