"""Makes the shared DSL sample programs importable from the language tests."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
