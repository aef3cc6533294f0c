#include "operators/llm/price_table.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kernelevolve::operators::llm {

double CostUsd(const ModelPrice& price, const TokenUsage& usage) {
  return (static_cast<double>(usage.input_tokens) * price.input_per_mtok +
          static_cast<double>(usage.output_tokens) * price.output_per_mtok) / 1e6;
}

PriceTable PriceTable::Load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw core::InvalidInputError(fmt::format(
        "--llm-prices {}: cannot read the price file (give an existing JSON file)", path.string()));
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw core::InvalidInputError(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_object()) {
    throw core::InvalidInputError(fmt::format(
        "{}: expected an object with a \"models\" object mapping \"provider:model\" to prices", path.string()));
  }
  PriceTable table;
  table.path_ = path;
  for (const auto& [id, entry] : doc["models"].items()) {
    ModelPrice price;
    for (auto [field, target] : {std::pair{"input_per_mtok", &price.input_per_mtok},
                                 std::pair{"output_per_mtok", &price.output_per_mtok}}) {
      if (!entry.is_object() || !entry.contains(field) || !entry[field].is_number() ||
          entry[field].get<double>() < 0) {
        throw core::InvalidInputError(fmt::format(
            "{}: models.\"{}\".{} must be a number >= 0 (USD per million tokens)", path.string(), id, field));
      }
      *target = entry[field].get<double>();
    }
    table.prices_[id] = price;
  }
  return table;
}

std::optional<ModelPrice> PriceTable::Find(const std::string& model_id) const {
  if (auto it = prices_.find(model_id); it != prices_.end()) return it->second;
  std::optional<ModelPrice> best;
  size_t best_length = 0;
  for (const auto& [id, price] : prices_) {
    if (model_id.size() > id.size() && model_id.compare(0, id.size(), id) == 0 &&
        model_id[id.size()] == '-' && id.size() > best_length) {
      best = price;
      best_length = id.size();
    }
  }
  return best;
}

std::filesystem::path DefaultPriceFile() {
  return std::filesystem::path(KE_SOURCE_DIR) / "config" / "llm_prices.json";
}

}  // namespace kernelevolve::operators::llm
