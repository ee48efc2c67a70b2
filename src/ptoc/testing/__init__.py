"""ptoc.testing: the harness users write system tests with (PyPTO's PTOTestCase surface)."""

from ptoc.dtypes import DataType
from ptoc.testing.case import PTOTestCase
from ptoc.testing.runner import GoldenMismatch, TestOutcome, run_case
from ptoc.testing.specs import TensorSpec

PLATFORMS = ("a2a3sim", "a5sim")
