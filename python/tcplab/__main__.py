"""``python -m tcplab ...`` is the same as the ``tcplab`` command."""

import sys

from .cli import main

sys.exit(main())
