"""The @pl.jit compile cache cannot lie or be abused (issue 16 points 1-4): the key covers
every folded value and option, entries are data checked against their key, directories
are private, writes are atomic, and an unusable cache never fails a call."""

import json
import os
import pickle
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cache_helpers
import cache_kernels as kernels
from ptoc.jit import private_dirs
from ptoc.jit.decorator import JITFunction
from ptoc.jit.private_dirs import JitCacheWarning
from ptoc.passes import PassContext
from ptoc.runtime import RunConfig

X = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(private_dirs, "_warned", set())
    monkeypatch.setattr(private_dirs, "_fallback", None)
    for fn in (kernels.by_module_constant, kernels.by_default, kernels.by_helper):
        fn._cache.clear()


def run(fn, *scalars):
    y = np.zeros_like(X)
    fn(X, y, *scalars)
    return y


def fresh(fn, cache_dir):
    """The same function in a new process: no memory cache, the given disk cache."""
    return JITFunction(fn.fn, cache_dir=cache_dir)


def entries(cache_dir):
    return sorted(Path(cache_dir).glob("*.json"))


# ---- point 1: the key covers every folded value ----------------------------------------------

def test_a_changed_module_constant_is_folded_again(tmp_path, monkeypatch):
    np.testing.assert_allclose(run(fresh(kernels.by_module_constant, tmp_path)), X)
    np.testing.assert_allclose(run(kernels.by_module_constant), X)
    monkeypatch.setattr(kernels, "SCALE", 2.0)
    np.testing.assert_allclose(run(kernels.by_module_constant), 2 * X)
    np.testing.assert_allclose(run(fresh(kernels.by_module_constant, tmp_path)), 2 * X)
    assert len(entries(tmp_path)) == 2


def test_closure_values_split_the_key(tmp_path):
    double, triple = kernels.make_by_closure(2.0), kernels.make_by_closure(3.0)
    np.testing.assert_allclose(run(fresh(double, tmp_path)), 2 * X)
    np.testing.assert_allclose(run(fresh(triple, tmp_path)), 3 * X)
    assert double.cache_key(X, X) != triple.cache_key(X, X)


def test_a_changed_default_argument_is_folded_again(tmp_path, monkeypatch):
    np.testing.assert_allclose(run(fresh(kernels.by_default, tmp_path)), 2 * X)
    np.testing.assert_allclose(run(kernels.by_default), 2 * X)
    np.testing.assert_allclose(run(kernels.by_default, 5.0), 5 * X)
    monkeypatch.setattr(kernels.by_default.fn, "__defaults__", (4.0,))
    np.testing.assert_allclose(run(kernels.by_default), 4 * X)
    np.testing.assert_allclose(run(fresh(kernels.by_default, tmp_path)), 4 * X)


def test_a_kernel_from_another_module_is_folded_again(tmp_path, monkeypatch):
    np.testing.assert_allclose(run(fresh(kernels.by_helper, tmp_path)), 2 * X)
    monkeypatch.setattr(cache_helpers, "FACTOR", -1.5)
    np.testing.assert_allclose(run(kernels.by_helper), -1.5 * X)
    np.testing.assert_allclose(run(fresh(kernels.by_helper, tmp_path)), -1.5 * X)


def test_every_compile_option_splits_the_key():
    fn = kernels.by_module_constant
    base = fn.cache_key(X, X)
    assert base == fn.cache_key(X, np.ones_like(X)), "values of tensors are not in the key"
    variants = [RunConfig(platform="a5sim"), RunConfig(memory_planner="PTOAS"),
                RunConfig(enable_pypto_l0c_double_buffer=True), RunConfig(dump_passes=True),
                RunConfig(compile_profiling=True), RunConfig(disabled_diagnostics=["PH001"])]
    keys = {fn.cache_key(X, X, config=c) for c in variants}
    assert base not in keys and len(keys) == len(variants)
    with PassContext(verification_level="NONE"):
        assert fn.cache_key(X, X) != base, "the active PassContext is read"
    assert fn.cache_key(X[:, :32].copy(), X[:, :32].copy()) != base


# ---- point 2: entries are data, checked against their key ----------------------------------

class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_entries_are_json_and_a_planted_pickle_never_runs(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    fn = fresh(kernels.by_module_constant, cache)
    key = fn.cache_key(X, X)
    cache.mkdir(mode=0o700)
    evil = pickle.dumps(_Payload(marker))
    (cache / f"{key}.pkl").write_bytes(evil)
    (cache / f"{key}.json").write_bytes(evil)
    with pytest.warns(JitCacheWarning, match="cannot read the cache entry"):
        np.testing.assert_allclose(run(fn), X)
    assert not marker.exists()
    data = json.loads((cache / f"{key}.json").read_text())      # replaced by a real entry
    assert data["key"] == key and "func.func @" in next(iter(data["entry"]["pto"].values()))
    assert stat.S_IMODE((cache / f"{key}.json").stat().st_mode) == 0o600


def test_an_entry_of_another_program_is_not_used(tmp_path, monkeypatch):
    run(fresh(kernels.by_module_constant, tmp_path))
    (one,) = entries(tmp_path)
    monkeypatch.setattr(kernels, "SCALE", 3.0)
    fn = fresh(kernels.by_module_constant, tmp_path)
    key = fn.cache_key(X, X)
    planted = json.loads(one.read_text())
    (tmp_path / f"{key}.json").write_text(json.dumps(planted))            # under a new name
    np.testing.assert_allclose(run(fn), 3 * X)
    planted["key"] = key                                                  # and relabelled
    (tmp_path / f"{key}.json").write_text(json.dumps(planted))
    np.testing.assert_allclose(run(fresh(kernels.by_module_constant, tmp_path)), 3 * X)
    right = json.loads((tmp_path / f"{key}.json").read_text())
    right["entry"]["pto"] = planted["entry"]["pto"]                      # other PTO, same key
    (tmp_path / f"{key}.json").write_text(json.dumps(right))
    np.testing.assert_allclose(run(fresh(kernels.by_module_constant, tmp_path)), 3 * X)


def test_a_cached_entry_is_used_without_compiling(tmp_path, monkeypatch):
    run(fresh(kernels.by_module_constant, tmp_path))

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled although the disk cache holds this program")

    monkeypatch.setattr("ptoc.runtime.compile_ir", no_compile)
    fn = fresh(kernels.by_module_constant, tmp_path)
    np.testing.assert_allclose(run(fn), X)
    compiled = fn.compile(X, X)
    assert (Path(compiled.output_dir) / "pto" / "by_module_constant.pto").read_text() == \
        compiled.pto_text["by_module_constant"]


def test_a_truncated_entry_is_compiled_again(tmp_path):
    run(fresh(kernels.by_module_constant, tmp_path))
    (one,) = entries(tmp_path)
    one.write_text(one.read_text()[:500])
    with pytest.warns(JitCacheWarning):
        np.testing.assert_allclose(run(fresh(kernels.by_module_constant, tmp_path)), X)
    json.loads(one.read_text())


# ---- point 2/3: only private directories are trusted ---------------------------------------

def refused(cache, match):
    fn = fresh(kernels.by_module_constant, cache)
    with pytest.warns(JitCacheWarning, match=match):
        np.testing.assert_allclose(run(fn), X)


def test_a_cache_directory_others_can_write_is_refused(tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    refused(cache, "group or others can write to it")
    assert entries(cache) == []


def test_a_cache_directory_owned_by_someone_else_is_refused(tmp_path, monkeypatch):
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: cache.stat().st_uid + 1)
    refused(cache, "owned by user id")
    assert entries(cache) == []


def test_a_symlinked_cache_directory_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    refused(tmp_path / "link", "symbolic link")
    assert entries(target) == []


def test_an_unusable_cache_never_fails_the_call(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    refused(blocker / "cache", "cannot create it")


def test_cache_directories_are_created_private(tmp_path):
    run(fresh(kernels.by_module_constant, tmp_path / "new" / "cache"))
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700


def test_a_planted_artifact_root_is_refused(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / f"ptoc-jit-{os.getuid()}").symlink_to(victim)
    fn = fresh(kernels.by_module_constant, None)
    with pytest.warns(JitCacheWarning, match="symbolic link"):
        compiled = fn.compile(X, X)
    assert list(victim.iterdir()) == []
    out = Path(compiled.output_dir)
    assert not out.is_relative_to(victim) and stat.S_IMODE(out.parent.stat().st_mode) == 0o700


@pytest.mark.no_roundtrip      # a class named '../../escape' does not print as Python
def test_a_function_name_cannot_leave_the_artifact_root():
    fn = fresh(kernels.by_module_constant, None)
    fn.name = "../../escape"
    out = Path(fn.compile(X, X).output_dir)
    assert out.parent == private_dirs.artifact_root() and ".." not in out.name


# ---- point 4: concurrent writers -------------------------------------------------------------

def test_concurrent_processes_share_one_cache(tmp_path):
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import cache_kernels as k
        from ptoc.jit.decorator import JITFunction
        x = np.ones((16, 64), np.float32)
        for _ in range(3):
            y = np.zeros_like(x)
            JITFunction(k.by_module_constant.fn, cache_dir={str(tmp_path)!r})(x, y)
            assert (y == x).all()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-W", "error::UserWarning", "-c", script],
                              env=env, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    assert len(entries(tmp_path)) == 1 and not list(tmp_path.glob(".*.tmp"))
