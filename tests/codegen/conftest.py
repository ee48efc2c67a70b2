"""Makes the codegen test helpers (``codegen_helpers``) importable from the codegen tests."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
