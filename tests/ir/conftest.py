"""Makes the shared sample builders (``ir_samples``) importable from the ptoc.ir tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from ir_samples import make_matmul_program  # noqa: E402
from ptoc.ir.nodes import Program  # noqa: E402


@pytest.fixture
def matmul_program() -> Program:
    return make_matmul_program()
