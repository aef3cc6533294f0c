"""KE_REFERENCE_DEVICE (worker/kernelevolve_worker/reference_device.py): parsing, the
CPU default, the fallback without a GPU, and a load through the worker with it set."""

from pathlib import Path

import pytest
import torch

from kernelevolve_worker import reference_device as rd
from kernelevolve_worker.protocol import ProtocolError


def test_requested_device_parsing():
    assert rd.requested_device({}) == "cpu"
    assert rd.requested_device({rd.ENV_VAR: " CUDA "}) == "cuda"
    assert rd.requested_device({rd.ENV_VAR: "cpu"}) == "cpu"
    with pytest.raises(ProtocolError, match="expected 'cpu' or 'cuda'"):
        rd.requested_device({rd.ENV_VAR: "gpu"})


def test_cpu_default_runs_the_model_itself():
    model = torch.nn.Linear(4, 3).eval()
    runner = rd.ReferenceRunner(model, environ={})
    assert runner.device is None and runner.model is model and runner.timed_model() is model
    x = torch.randn(2, 4)
    (out,) = runner.run([x], "p.py")
    assert torch.equal(out, model(x).detach())


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU fallback")
def test_cuda_without_a_gpu_falls_back_with_a_note():
    runner = rd.ReferenceRunner(torch.nn.ReLU(), environ={rd.ENV_VAR: "cuda"})
    assert runner.device is None
    assert "no CUDA GPU is visible" in runner.note


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_outputs_come_back_to_the_cpu():
    model = torch.nn.Linear(4, 3).eval()
    runner = rd.ReferenceRunner(model, environ={rd.ENV_VAR: "cuda"})
    assert runner.device is not None and runner.model is not model
    x = torch.randn(2, 4)
    (out,) = runner.run([x], "p.py")
    assert out.device.type == "cpu"
    torch.testing.assert_close(out, model(x).detach(), atol=1e-3, rtol=1e-3)


def test_gemm_problem_loads_through_the_worker_with_the_setting(monkeypatch, tmp_path):
    """problems/gpu_gemm/matmul_bias_relu.py (shrunk) loads with KE_REFERENCE_DEVICE=cuda:
    on the GPU where there is one, else on the CPU with the note; the graph is the
    permute + addmm + relu the matmul template expects, and the bfloat16 TOLERANCE lands in
    the manifest."""
    import json

    from conftest import REPO_ROOT, WorkerProcess, load_params

    monkeypatch.setenv(rd.ENV_VAR, "cuda")
    process = WorkerProcess()
    try:
        params = load_params(REPO_ROOT / "problems" / "gpu_gemm" / "matmul_bias_relu.py", tmp_path / "fx",
                             overrides={"M": 32, "N": 16, "K": 24}, seeds=[0])
        result = process.call("load_problem", params)
    finally:
        process.close()
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert result["reference_device"].startswith(expected)
    assert ("no CUDA GPU" in result["reference_note"]) == (expected == "cpu")
    calls = [n["target"] for n in result["graph"]["nodes"] if n["kind"] == "call"]
    assert calls == ["aten.permute.default", "aten.addmm.default", "aten.relu.default"]
    assert result["outputs"][0]["dtype"] == "bfloat16"
    manifest = json.loads(Path(result["manifest_path"]).read_text())
    assert "tolerance" not in manifest  # the bfloat16 default, with eager's own error per element:
    # written by the worker where the reference ran on the CPU, measured by the GPU runner otherwise
    assert manifest.get("seed_allowance") == ([["output.0"]] if expected == "cpu" else None)
    assert [e["name"] for e in manifest["edge_cases"]] == ["negative", "zeros"]
