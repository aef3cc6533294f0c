#include "platforms/triton/gpu_runner_client.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::platforms::triton {

GpuDeviceInfo DeviceInfoFromJson(const nlohmann::json& doc) {
  GpuDeviceInfo info;
  try {
    info.cuda = doc.at("cuda").get<bool>();
    info.interpret = doc.value("interpret", false);
    info.device_name = doc.value("device_name", "");
    info.capability = doc.value("capability", "");
    info.sm_count = doc.value("sm_count", 0);
    info.l2_bytes = doc.value("l2_bytes", int64_t{0});
    info.memory_bytes = doc.value("memory_bytes", int64_t{0});
    info.shared_memory_per_block_optin = doc.value("shared_memory_per_block_optin", int64_t{0});
    info.shared_memory_per_sm = doc.value("shared_memory_per_sm", int64_t{0});
    info.torch_version = doc.value("torch_version", "");
    info.triton_version = doc.value("triton_version", "");
  } catch (const nlohmann::json::exception& e) {
    throw core::InvalidInputError(std::string("gpu_hello: malformed answer: ") + e.what());
  }
  return info;
}

GpuRunnerClient::GpuRunnerClient(problem::WorkerOptions options, double start_timeout_seconds)
    : options_(std::move(options)), start_timeout_seconds_(start_timeout_seconds) {
  if (options_.python.empty()) options_.python = problem::DefaultPython();  // named in errors below
  options_.role = "gpu_runner";  // issue 22: pooled runners go back to runs as runners first
  EnsureStarted();
  const nlohmann::json hello = client_->Call("gpu_hello", nlohmann::json::object(), start_timeout_seconds_);
  device_ = DeviceInfoFromJson(hello);
  if (!device_.Usable()) {
    client_->Shutdown();
    throw core::InvalidInputError(
        "--target triton: no CUDA GPU is visible to the GPU runner (torch.cuda.is_available() is False "
        "in " + options_.python.string() + "); run on a machine with an NVIDIA GPU and a CUDA build of "
        "PyTorch" + kInterpretHint);
  }
  if (device_.triton_version.empty()) {
    client_->Shutdown();
    throw core::InvalidInputError("--target triton: the GPU runner cannot import triton (" +
                                  hello.value("triton_error", std::string("unknown reason")) +
                                  "); install triton into " + options_.python.string());
  }
}

void GpuRunnerClient::EnsureStarted() {
  if (client_ && client_->Alive()) return;
  client_ = problem::WorkerPool::Shared().Take(options_);
  ++starts_;
  prepared_ = false;
}

void GpuRunnerClient::Prepare(const std::filesystem::path& manifest_path, bool compile_baseline,
                              double timeout_seconds) {
  if (prepared_ && manifest_path == manifest_path_ && client_ && client_->Alive()) return;
  manifest_path_ = manifest_path;
  compile_baseline_ = compile_baseline;
  prepare_timeout_seconds_ = timeout_seconds;
  prepared_ = false;
  EnsurePrepared();
}

void GpuRunnerClient::EnsurePrepared() {
  EnsureStarted();
  if (prepared_) return;
  if (manifest_path_.empty()) throw core::InternalError("GpuRunnerClient: Call before Prepare");
  nlohmann::json params = {{"manifest_path", manifest_path_.string()}, {"eager", true}};
  if (device_.cuda) params["compile"] = compile_baseline_;
  else params["compile"] = false;  // inductor on the CPU is neither needed nor quick
  const nlohmann::json result = client_->Call("gpu_prepare", params, prepare_timeout_seconds_);
  prepare_notes_ = result.value("notes", std::vector<std::string>{});
  prepare_phase_seconds_ = result.value("phase_seconds", nlohmann::json::object());
  prepared_ = true;
}

nlohmann::json GpuRunnerClient::Call(const std::string& method, const nlohmann::json& params,
                                     double timeout_seconds) {
  EnsurePrepared();
  return client_->Call(method, params, timeout_seconds);
}

nlohmann::json GpuRunnerClient::CallUnprepared(const std::string& method,
                                               const nlohmann::json& params,
                                               double timeout_seconds) {
  EnsureStarted();
  return client_->Call(method, params, timeout_seconds);
}

void GpuRunnerClient::Restart() {
  if (client_) client_->Shutdown();
  client_.reset();
  prepared_ = false;
}

}  // namespace kernelevolve::platforms::triton
