// Starts tests/llm_fake_server/fake_llm_server.py on a free port for one test and stops
// it at the end (SIGTERM, then waitpid). Header-only; used by unit and integration tests.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelevolve::testing_llm {

class FakeLlmServer {
 public:
  /// `scenario`: the JSON scenario (see fake_llm_server.py); `dir`: a scratch folder.
  FakeLlmServer(const nlohmann::json& scenario, const std::filesystem::path& dir,
                const std::string& api_key = "test-key", const std::string& models = "test-model")
      : dir_(dir) {
    std::filesystem::create_directories(dir_);
    const auto scenario_path = dir_ / "scenario.json";
    std::ofstream(scenario_path) << scenario.dump(2);
    const auto port_file = dir_ / "port";
    std::filesystem::remove(port_file);
    log_ = dir_ / "served.jsonl";
    std::filesystem::remove(log_);
    const std::string script = std::string(KE_TEST_DATA_DIR) + "/llm_fake_server/fake_llm_server.py";
    std::vector<std::string> args = {"python3", script, "--port-file", port_file.string(), "--scenario",
                                     scenario_path.string(), "--log", log_.string(), "--api-key", api_key,
                                     "--models", models};
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp("python3", argv.data());
      _exit(127);
    }
    for (int i = 0; i < 300 && !std::filesystem::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream in(port_file);
    if (!(in >> port_)) throw std::runtime_error("fake LLM server did not start (python3 missing?)");
  }
  ~FakeLlmServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  /// Every response served so far, one JSON object each (fake_llm_server.py's log).
  std::vector<nlohmann::json> Served() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    }
    return out;
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace kernelevolve::testing_llm
