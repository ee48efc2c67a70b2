"""Makes the PTO tests' kernel builders (test_planner) importable from other PTO tests."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
