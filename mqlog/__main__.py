"""`python -m mqlog`: the command line, as the `mqlog` entry point runs it."""

import sys

from mqlog.cli import main

sys.exit(main())
