"""Makes the PyPTO-form test kernels importable (jit functions must live in a source file)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
