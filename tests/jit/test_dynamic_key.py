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
    for fn in (kernels.add_rows, kernels.add_static, kernels.add_bound, kernels.add_incore_local,
               kernels.add_cascaded, kernels.add_cascaded_annotation):
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


def test_a_symbol_the_jit_body_makes_itself_keys_one_entry():
    for rows in (16, 32, 48):
        call(kernels.add_incore_local, rows)
    assert len(kernels.add_incore_local._cache) == 1


@pytest.mark.parametrize("entry", ["add_cascaded", "add_cascaded_annotation"])
def test_an_incore_callees_dynamic_dim_makes_the_callers_bare_tensor_dim_dynamic(entry):
    fn = getattr(kernels, entry)
    for rows in (16, 48, 32):
        call(fn, rows)
    assert len(fn._cache) == 1


def test_the_static_dims_of_a_cascaded_tensor_still_key():
    fn = kernels.add_cascaded
    keys = {fn.cache_key(*(np.zeros((rows, cols), np.float32) for _ in range(3)))
            for rows, cols in ((16, 64), (64, 64), (16, 128))}
    assert len(keys) == 2        # the rows are the symbol; the columns stay in the key


def test_two_tensors_a_cascaded_symbol_names_must_agree():
    a = np.zeros((16, 64), np.float32)
    with pytest.raises(PtocError, match=r"dimension R is 32 for argument 'b' dim 0 but 16 for "
                                        r"argument 'a' dim 0"):
        kernels.add_cascaded(a, np.zeros((32, 64), np.float32), np.zeros((16, 64), np.float32))
