import sys

from tkperf.cli import main

sys.exit(main())
