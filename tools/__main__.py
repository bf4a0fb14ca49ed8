"""``python -m tools <step>``: see tools/cli.py."""

import sys

from tools.cli import main

sys.exit(main())
