"""Make the hand-written kernel generators (``sim_kernels``) importable from the sim tests."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
