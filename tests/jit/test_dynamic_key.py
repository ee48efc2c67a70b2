"""The @pl.jit cache key holds pl.dynamic dims as PyPTO's does (as None): another size of a
dynamic dim reuses the compiled entry, in memory and on disk; a static dim that changes
compiles again; an argument that contradicts a static annotated dim is an error."""

from pathlib import Path

import numpy as np
import pytest

import dynamic_kernels as kernels
from ptoc.errors import PtocError
from ptoc.jit.decorator import JITFunction


@pytest.fixture(autouse=True)
def _fresh():
    for fn in (kernels.add_rows, kernels.add_static, kernels.add_bound):
        fn._cache.clear()


def call(fn, rows, cols=64, seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    out = np.zeros((rows, cols), np.float32)
    fn(a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_every_size_of_a_dynamic_dim_shares_one_entry(tmp_path):
    for rows in (16, 48, 32):
        call(kernels.add_rows, rows)
    assert len(kernels.add_rows._cache) == 1
    on_disk = JITFunction(kernels.add_rows.fn, cache_dir=tmp_path)
    for rows in (64, 16):
        call(on_disk, rows)
    assert len(list(Path(tmp_path).glob("*.json"))) == 1


def test_a_static_dim_that_changes_compiles_again():
    for rows in (16, 32):
        call(kernels.add_static, rows)
    assert len(kernels.add_static._cache) == 2


def test_an_argument_against_a_static_annotated_dim_is_refused():
    with pytest.raises(PtocError, match=r"argument 'a' is .*\[16, 32\].*annotation says"):
        call(kernels.add_rows, 16, cols=32)


def test_bind_dynamic_on_a_bare_tensor_keys_the_symbol():
    for rows in (16, 32, 64):
        call(kernels.add_bound, rows)
    assert len(kernels.add_bound._cache) == 1
