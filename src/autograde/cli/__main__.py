"""``python -m autograde.cli``: the ``autograde`` command (the workflow's vLLM jobs run it this way)."""

import sys

from autograde.cli import main

sys.exit(main())
