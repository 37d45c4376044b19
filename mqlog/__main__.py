import sys

from mqlog.cli import main

sys.exit(main())
