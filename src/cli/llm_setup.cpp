#include "cli/llm_setup.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "eval/fixture_manifest.h"
#include "operators/llm/price_table.h"
#include "operators/llm/prompt_builder.h"
#include "operators/llm/target_protocol.h"

namespace kernelevolve::cli {
namespace {

namespace llm = operators::llm;

bool IsHttpUrl(const std::string& url) { return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0; }

/// Provider -> base URL ("*" for a URL given without PROVIDER=).
std::map<std::string, std::string> BaseUrls(const OptimizeOptions& o) {
  std::map<std::string, std::string> urls;
  for (const std::string& text : o.llm_base_urls) {
    std::string key = "*";
    std::string url = text;
    if (!IsHttpUrl(text)) {
      const size_t eq = text.find('=');
      if (eq == std::string::npos || !IsHttpUrl(text.substr(eq + 1))) {
        throw core::InvalidInputError(fmt::format(
            "--llm-base-url {}: expected an http(s) URL, e.g. http://127.0.0.1:8000/v1, or "
            "PROVIDER=URL, e.g. anthropic=https://proxy.example/v1", text));
      }
      key = text.substr(0, eq);
      url = text.substr(eq + 1);
      if (key != "openai" && key != "anthropic") {
        throw core::InvalidInputError(fmt::format("--llm-base-url {}: unknown provider '{}' (openai, anthropic)", text, key));
      }
    }
    if (!urls.emplace(key, url).second) {
      throw core::InvalidInputError(fmt::format("--llm-base-url: given twice for {}", key == "*" ? "all providers" : key));
    }
  }
  return urls;
}

llm::PriceTable LoadPrices(const OptimizeOptions& o) {
  return llm::PriceTable::Load(o.llm_prices.empty() ? llm::DefaultPriceFile() : o.llm_prices);
}

std::vector<std::unique_ptr<llm::Provider>> MakeProviders(const OptimizeOptions& o) {
  const auto urls = BaseUrls(o);
  std::vector<std::unique_ptr<llm::Provider>> providers;
  std::set<std::string> seen;
  for (const std::string& spec : o.llm) {
    auto [provider, model] = llm::ParseModelSpec(spec);
    if (!seen.insert(spec).second) throw core::InvalidInputError(fmt::format("--llm {}: given twice", spec));
    llm::ProviderConfig config;
    config.provider = provider;
    config.model = model;
    if (auto it = urls.find(provider); it != urls.end()) config.base_url = it->second;
    else if (auto all = urls.find("*"); all != urls.end()) config.base_url = all->second;
    config.timeout_seconds = o.llm_timeout_seconds;
    config.connect_timeout_seconds = std::min(10.0, o.llm_timeout_seconds);
    providers.push_back(llm::MakeProvider(config, [](const char* name) { return std::getenv(name); }));
  }
  return providers;
}

}  // namespace

void ValidateLlmFlags(const OptimizeOptions& o) {
  if (o.llm.empty()) {
    // A cap or a server without a model is a misunderstanding worth stopping for; a
    // price file or prompt folder without a model is harmless and ignored.
    if (!o.llm_base_urls.empty() || o.max_cost_usd != 0 || o.llm_temperature >= 0) {
      throw core::InvalidInputError(
          "--llm-base-url, --max-cost and --llm-temperature need --llm PROVIDER:MODEL (without --llm the "
          "offline template operator writes the candidates and nothing costs money)");
    }
    return;
  }
  if (o.max_cost_usd < 0) throw core::InvalidInputError("--max-cost must be 0 (no cap) or a positive amount of US dollars");
  if (o.llm_timeout_seconds <= 0) throw core::InvalidInputError("--llm-timeout must be positive (seconds per HTTP attempt)");
  if (o.llm_retries < 1) throw core::InvalidInputError("--llm-retries must be at least 1 (attempts per call)");
  if (o.llm_max_tokens < 1) throw core::InvalidInputError("--llm-max-tokens must be at least 1");
  if (o.llm_temperature > 2) {
    throw core::InvalidInputError("--llm-temperature must be between 0 and 2 (OpenAI's and Anthropic's range)");
  }
  const llm::TargetProtocol& protocol = llm::ProtocolFor(o.target);
  llm::PriceTable prices = LoadPrices(o);
  auto providers = MakeProviders(o);
  if (o.max_cost_usd > 0) {
    for (const auto& p : providers) {
      if (!prices.Find(p->Id())) {
        throw core::InvalidInputError(fmt::format(
            "--max-cost: no price for {} in {}; add it to \"models\" (0 for a free local model) or "
            "give another file with --llm-prices", p->Id(), prices.Path().string()));
      }
    }
  }
  llm::PromptLibrary::Load(o.llm_prompts.empty() ? llm::DefaultPromptDir() : o.llm_prompts).AbiTemplate(protocol);
}

std::string PromptHardware(const OptimizeOptions& o, const core::MachineContext& machine,
                           platforms::triton::TritonPlatform* gpu) {
  if (!gpu) {
    return llm::DescribeHardware(machine.cpu_model, machine.logical_cores, o.threads, machine.copy_bandwidth_gbps,
                                 machine.peak_gflops);
  }
  const platforms::triton::GpuDeviceInfo& d = gpu->Device();
  llm::GpuFacts g;
  g.device_name = d.device_name;
  g.capability = d.capability;
  g.interpret = d.interpret && !d.cuda;
  g.sm_count = d.sm_count;
  g.l2_bytes = d.l2_bytes;
  g.memory_bytes = d.memory_bytes;
  g.shared_memory_per_block_optin = d.shared_memory_per_block_optin;
  g.shared_memory_per_sm = d.shared_memory_per_sm;
  g.copy_bandwidth_gbps = machine.copy_bandwidth_gbps;
  if (d.cuda) g.matmul_tflops = gpu->MatmulPeakTflops();  // cached by PrepareGpuRun
  return llm::DescribeGpu(g);
}

std::unique_ptr<llm::LlmOperator> MakeLlmOperator(const OptimizeOptions& o, store::Store& store, int64_t run_id,
                                                  const knowledge::KnowledgeBase* kb,
                                                  const core::MachineContext& machine, const core::Problem& problem,
                                                  platforms::triton::TritonPlatform* gpu) {
  llm::LlmOperatorOptions lo;
  lo.providers = MakeProviders(o);
  lo.prices = LoadPrices(o);
  lo.max_cost_usd = o.max_cost_usd;
  lo.retry.max_attempts = o.llm_retries;
  lo.max_tokens = o.llm_max_tokens;
  lo.temperature = o.llm_temperature;
  lo.prompt_dir = o.llm_prompts;
  lo.hardware = PromptHardware(o, machine, gpu);
  lo.target = o.target;
  try {  // the problem's own TOLERANCE; the defaults stand when the manifest cannot be read
    lo.tolerance_overrides = eval::ReadFixtureManifest(problem.fixtures_dir / "manifest.json").tolerance_overrides;
  } catch (const std::exception&) {
  }
  lo.seed = o.seed;
  return std::make_unique<llm::LlmOperator>(std::move(lo), store, run_id, kb);
}

nlohmann::json LlmResultJson(const llm::LlmOperator& op, const OptimizeOptions& o) {
  nlohmann::json models = nlohmann::json::array();
  const llm::ModelBandit& b = op.bandit();
  for (size_t a = 0; a < b.arms().size(); ++a) {
    models.push_back({{"model", b.arms()[a]}, {"pulls", b.pulls(a)}, {"mean_gain_per_usd", b.mean(a)}});
  }
  const llm::CostLedger& l = op.ledger();
  return {{"models", models},
          {"calls", op.calls()},
          {"input_tokens", l.input_tokens()},
          {"output_tokens", l.output_tokens()},
          {"cost_usd", l.spent_usd()},
          {"max_cost_usd", o.max_cost_usd},
          {"cost_cap_reached", l.cap_reached()},
          {"cost_cap_message", op.cap_message()},
          {"ledger", "llm_calls table of kernelevolve.db"}};
}

double LlmCostOfRun(const std::filesystem::path& result_json) {
  std::ifstream in(result_json);
  const nlohmann::json r = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (!r.is_object() || !r.contains("llm") || !r["llm"].is_object()) return 0;
  const nlohmann::json& cost = r["llm"].value("cost_usd", nlohmann::json(0.0));
  return cost.is_number() ? cost.get<double>() : 0.0;
}

std::string LlmProgressField(const llm::LlmOperator& op) {
  return fmt::format("llm ${:.4f} ({} call{})", op.ledger().spent_usd(), op.calls(), op.calls() == 1 ? "" : "s");
}

std::string LlmCostLine(const llm::LlmOperator& op) {
  const llm::CostLedger& l = op.ledger();
  return fmt::format("llm: {} calls, {} input + {} output tokens, ${:.4f}{}", op.calls(), l.input_tokens(),
                     l.output_tokens(), l.spent_usd(),
                     l.cap_reached() ? fmt::format(" (stopped: {})", op.cap_message()) : "");
}

}  // namespace kernelevolve::cli
