"""``python -m transformer_lab.report outputs/multirun/<sweep>``."""

import sys

from transformer_lab.report import main

sys.exit(main())
