"""compile_cache.py: eager and torch.compile baselines kept between gpu_prepare calls
of one GPU runner (issue 22), keyed by the problem file's bytes, overrides, specs,
seeds and device."""

from __future__ import annotations

from pathlib import Path

from kernelevolve_worker.compile_cache import CompiledBaselines, baseline_key

SPECS = [{"name": "input.0", "role": "input", "shape": [4, 8], "dtype": "float32"}]


def test_key_follows_file_bytes_overrides_specs_seeds_and_device(tmp_path: Path) -> None:
    problem = tmp_path / "p.py"
    problem.write_text("batch_size = 4\n")
    key = baseline_key(str(problem), {}, SPECS, [0, 1], "cuda:0")
    assert key == baseline_key(str(problem), {}, SPECS, [0, 1], "cuda:0")
    other_specs = [dict(SPECS[0], shape=[8, 8])]
    variants = [
        baseline_key(str(problem), {"batch_size": "8"}, SPECS, [0, 1], "cuda:0"),
        baseline_key(str(problem), {}, other_specs, [0, 1], "cuda:0"),
        baseline_key(str(problem), {}, SPECS, [0], "cuda:0"),
        baseline_key(str(problem), {}, SPECS, [0, 1], "cuda:1"),
    ]
    assert len({key, *variants}) == 5
    problem.write_text("batch_size = 4  # edited\n")
    assert baseline_key(str(problem), {}, SPECS, [0, 1], "cuda:0") != key
    assert baseline_key(str(tmp_path / "gone.py"), {}, SPECS, [0, 1], "cuda:0") is None


def test_least_recently_used_entry_goes_first() -> None:
    cache = CompiledBaselines(capacity=2)
    eager_a, eager_b, eager_c = (lambda: "a"), (lambda: "b"), (lambda: "c")
    cache.put("a", eager_a, None)
    cache.put("b", eager_b, None)
    assert cache.get("a") == (eager_a, None)  # "a" is now the most recent
    cache.put("c", eager_c, None)
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    assert len(cache) == 2 and cache.hits == 3
    cache.put(None, eager_a, None)  # an unreadable file is never cached
    assert len(cache) == 2 and cache.get(None) is None
