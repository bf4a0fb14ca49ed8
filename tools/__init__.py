"""The book's build: split, execute, merge, render, publish (``python -m tools <step>``).

``python -m tools build`` runs every step; ``python -m tools --help`` lists them.
"""

import sys

# nbformat imports jsonschema, which compiles a large grammar at import time (seconds)
# when the optional rfc3987-syntax package is installed.  Notebooks never use the
# "iri" string format that grammar validates, so the build's processes go without it.
sys.modules.setdefault('rfc3987_syntax', None)
