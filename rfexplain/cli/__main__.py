"""``python -m rfexplain.cli``: the command line, as ``python -m rfexplain`` runs it."""

import sys

from rfexplain.cli.dispatch import main

sys.exit(main())
