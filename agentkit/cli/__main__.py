"""``python -m agentkit.cli``: the ``agentkit`` command."""

import sys

from agentkit.cli.command import main

sys.exit(main())
