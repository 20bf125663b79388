"""``python -m agentkit`` is the ``agentkit`` command."""

import sys

from agentkit.cli import main

sys.exit(main())
