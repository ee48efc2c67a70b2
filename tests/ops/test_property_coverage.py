"""Every catalog name ptoc runs on one core is drawn by a hypothesis property test that
compares the simulated core with a numpy reference (issue 11 acceptance); the few names that
carry no values of their own say where they are tested instead."""

from __future__ import annotations

import test_compare_layout as cl
import test_elementwise as ew
import test_family_properties as fp
import test_layout_property as lp
import test_matmul_family as mm
import test_reduction_broadcast as rb

from ptoc.ops.catalog import CATALOG, DIRECTIVES, NOT_RUN


def _names(family: str) -> tuple[str, ...]:
    return next(f.names for f in CATALOG if f.title == family)


#: catalog name -> the property test that draws it
COVERAGE = {
    "create_tile": fp.test_sel_and_sels_pick_by_a_random_mask,
    "full": fp.test_full_and_expands_write_the_converted_value,
    "arange": lp.test_arange, "tri": lp.test_tri,
    "load": fp.test_load_store_windows_and_valid_shapes,
    "store": fp.test_load_store_windows_and_valid_shapes,
    "move": fp.test_load_store_windows_and_valid_shapes,
    "extract": fp.test_extract_windows_feed_the_cube,
    **{n: ew.test_family_property for n in _names("Elementwise arithmetic")
       if not n.startswith("part_")},
    **{n: fp.test_partial_ops_combine_where_both_are_valid for n in
       ("part_add", "part_mul", "part_max", "part_min")},
    "exp": ew.test_family_property, "log": ew.test_family_property,
    "sqrt": ew.test_family_property, "rsqrt": ew.test_family_property,
    "sin": fp.test_sin_cos_follow_the_fp32_recipe, "cos": fp.test_sin_cos_follow_the_fp32_recipe,
    "cmp": cl.test_cmp_property, "cmps": cl.test_cmp_property,
    **{n: ew.test_family_property for n in ("maximum", "minimum", "maximums", "minimums")},
    "max": fp.test_scalar_max_min_of_two_elements, "min": fp.test_scalar_max_min_of_two_elements,
    "sel": fp.test_sel_and_sels_pick_by_a_random_mask,
    "sels": fp.test_sel_and_sels_pick_by_a_random_mask,
    **{n: ew.test_family_property for n in _names("Activations")},
    **{n: ew.test_family_property for n in _names("Bitwise") if n not in ("shl", "shr")},
    "shl": fp.test_shift_by_a_tile_of_counts, "shr": fp.test_shift_by_a_tile_of_counts,
    **{n: rb.test_reduction_property for n in _names("Reductions")},
    **{n: rb.test_broadcast_property for n in _names("Broadcast and expand")
       if n.startswith(("row_expand", "col_expand"))},
    "expands": fp.test_full_and_expands_write_the_converted_value,
    "fillpad": lp.test_fillpad_over_random_valid_regions,
    "fillpad_expand": fp.test_set_validshape_then_fillpad,
    "fillpad_inplace": fp.test_set_validshape_then_fillpad,
    "reshape": lp.test_concat_and_reshape, "concat": lp.test_concat_and_reshape,
    "transpose": lp.test_transpose,
    "transpose_view": fp.test_transpose_view_of_a_mat_tile_multiplies_as_its_transpose,
    "slice": fp.test_slice_then_assemble_moves_one_window,
    "assemble": fp.test_slice_then_assemble_moves_one_window,
    "reinterpret_view": fp.test_reinterpret_view_reads_the_same_bytes,
    "set_validshape": fp.test_set_validshape_then_fillpad,
    "cast": fp.test_cast_between_every_dtype_pair,
    "dim": fp.test_scalar_max_min_of_two_elements,
    "read": lp.test_read_write_one_element, "write": lp.test_read_write_one_element,
    "matmul": mm.test_tile_matmul_and_gemv_are_bit_exact,
    "matmul_bias": mm.test_tile_matmul_and_gemv_are_bit_exact,
    "gemv": mm.test_tile_matmul_and_gemv_are_bit_exact,
    "gemv_bias": mm.test_tile_matmul_and_gemv_are_bit_exact,
    "matmul_acc": fp.test_matmul_acc_and_gemv_acc_continue_the_sum,
    "gemv_acc": fp.test_matmul_acc_and_gemv_acc_continue_the_sum,
}

#: running names with no values of their own to compare, and where they are tested
ELSEWHERE = {
    "create_tensor": "a GM allocation (no values until written): tests/system (tensor-level "
                     "programs and orchestration)",
    **{n: "cross-core and core-group ops (issue 12): tests/system/test_mixed_kernels.py"
       for n in _names("Cross-core transfer") + _names("Block identity")
       + ("reserve_buffer", "import_peer_buffer")},
    **{n: "orchestration arrays of task ids (issue 13): tests/runtime/test_task_ids.py"
       for n in _names("Arrays")},
}


def test_every_running_catalog_name_has_a_property_test():
    running = {n for f in CATALOG for n in f.names if n not in NOT_RUN and n not in DIRECTIVES}
    missing = sorted(running - COVERAGE.keys() - ELSEWHERE.keys())
    assert not missing, f"catalog names with no property test: {missing}"
    stale = sorted((COVERAGE.keys() | ELSEWHERE.keys()) - running)
    assert not stale, f"listed but not run (or not in the catalog): {stale}"


def test_the_listed_tests_are_hypothesis_property_tests():
    not_given = sorted({fn.__name__ for fn in COVERAGE.values() if not hasattr(fn, "hypothesis")})
    assert not not_given, not_given
