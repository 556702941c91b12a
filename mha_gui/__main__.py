"""`python -m mha_gui` behaves exactly like the `mha-gui` console script."""

import sys

from mha_gui.cli import main

if __name__ == "__main__":
    sys.exit(main())
