// A Triton program's entry launched as one CUDA graph (knob "cuda_graph").
//
// Each Triton launch from Python costs host time (argument binding, the specialization
// key, cuLaunchKernel): for a recurrence unrolled into two small kernels per time step,
// that host time, not the GPU, bounds the call (lstm_2layer_output at 0.35x of eager on
// an H100, 2026-12-06, docs/gpu.md). A CUDA graph records the launches once and replays
// them with one host call (CUDA C++ Programming Guide, "CUDA Graphs"; PyTorch:
// torch.cuda.CUDAGraph, torch.cuda.graph, "CUDA Graphs" in the CUDA semantics notes).
//
// A graph replays its kernels on the addresses it was captured with, so the entry keeps
// one graph per set of buffers: the key is every input's and output's address, shape,
// strides and dtype. Replaying reads the buffers' current contents, so a call with new
// values in the same buffers is computed anew, never served from an earlier result.
// The intermediate buffers live in the graph's private memory pool (PyTorch allocates
// them during capture), so the entry keeps a few graphs (CudaGraphsKept), dropping the
// least recently used one.
//
// The first call with a new set of buffers launches the kernels directly (which compiles
// them: Triton cannot compile during a capture) and then captures them. The entry
// launches directly, without a graph, when a buffer is not on a CUDA device
// (TRITON_INTERPRET=1) and when the caller is itself capturing a graph (the launches then
// become part of the caller's graph); after a capture fails, or after kCudaGraphMisses
// captures in a row that were never replayed, it drops its graphs and launches directly
// from then on, with a warning.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kernelevolve::operators::codegen {

/// Bytes that the graphs one entry keeps may hold together: 16 GiB, a fifth of an
/// 80 GB H100 or H200's memory.
inline constexpr int64_t kCudaGraphPoolBytes = int64_t{16} << 30;

/// Graphs an entry keeps (one per set of buffers) when each holds `intermediate_bytes`:
/// 4, fewer where they would pass kCudaGraphPoolBytes together, at least 1. The GPU
/// runner's checks call with fresh buffers each time and its timing loop with the same
/// ones (two sets: its own outputs and drop-in ones), so two or more avoid recapturing.
inline int CudaGraphsKept(int64_t intermediate_bytes) {
  const int64_t fit = kCudaGraphPoolBytes / std::max<int64_t>(intermediate_bytes, 1);
  return static_cast<int>(std::clamp<int64_t>(fit, 1, 4));
}

/// Captures in a row that no call replays after which the entry stops capturing (a
/// caller that passes new buffers on every call would pay a capture, a device-wide
/// synchronize included, on every call). The GPU runner's checks make about 10 calls
/// with fresh buffers before its timing loop reuses them, so the bound is above that.
inline constexpr int kCudaGraphMisses = 32;

/// Python text of `entry_name(inputs, outputs)` that replays a captured CUDA graph of
/// `launch_name(inputs, outputs)` (defined by the caller's module, which imports torch),
/// keeping up to `kept` graphs.
inline std::string CudaGraphEntry(const std::string& entry_name, const std::string& launch_name, int kept) {
  return fmt::format(
      "\n\n# cuda_graph = yes: {launch}'s launches are captured as one CUDA graph per set of buffers\n"
      "# (addresses, shapes, strides, dtypes) and replayed on the next calls with those buffers,\n"
      "# which reads their current contents. The first call with new buffers launches directly\n"
      "# (compiling the kernels) and then captures; CPU tensors (TRITON_INTERPRET=1), a caller that\n"
      "# is capturing itself, a failed capture and {misses} captures in a row that were never\n"
      "# replayed (a caller passing new buffers every call) launch directly from then on.\n"
      "_ke_graphs = {{}}\n"
      "_ke_graph_state = {{\"misses\": 0, \"off\": \"\"}}\n"
      "\n\n"
      "def _ke_graphs_off(why):\n"
      "    import warnings\n"
      "    _ke_graph_state[\"off\"] = why\n"
      "    _ke_graphs.clear()  # frees the graphs' memory pools\n"
      "    warnings.warn(f\"CUDA graphs off, launching directly: {{why}}\")\n"
      "\n\n"
      "def {entry}(inputs, outputs):\n"
      "    buffers = (*inputs, *outputs)\n"
      "    if (_ke_graph_state[\"off\"] or not all(t.is_cuda for t in buffers)\n"
      "            or torch.cuda.is_current_stream_capturing()):\n"
      "        return {launch}(inputs, outputs)\n"
      "    key = tuple((t.data_ptr(), tuple(t.shape), t.stride(), t.dtype) for t in buffers)\n"
      "    graph = _ke_graphs.pop(key, None)\n"
      "    if graph is not None:\n"
      "        _ke_graphs[key] = graph  # the most recently used last\n"
      "        _ke_graph_state[\"misses\"] = 0\n"
      "        graph.replay()\n"
      "        return\n"
      "    {launch}(inputs, outputs)\n"
      "    _ke_graph_state[\"misses\"] += 1\n"
      "    if _ke_graph_state[\"misses\"] > {misses}:\n"
      "        return _ke_graphs_off(\"{misses} captures in a row were never replayed: new buffers on every call\")\n"
      "    while len(_ke_graphs) >= {kept}:  # at most {kept} graphs, the new one included\n"
      "        del _ke_graphs[next(iter(_ke_graphs))]\n"
      "    graph = torch.cuda.CUDAGraph()\n"
      "    try:\n"
      "        with torch.cuda.graph(graph):\n"
      "            {launch}(inputs, outputs)\n"
      "    except Exception as error:  # noqa: BLE001 - any failure: launch directly from now on\n"
      "        return _ke_graphs_off(f\"the capture failed: {{error}}\")\n"
      "    _ke_graphs[key] = graph\n",
      fmt::arg("entry", entry_name), fmt::arg("launch", launch_name), fmt::arg("kept", kept),
      fmt::arg("misses", kCudaGraphMisses));
}

}  // namespace kernelevolve::operators::codegen
