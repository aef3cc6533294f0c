// One LLM call as stored in the `llm_calls` table (schema v3, issue 7): the run's cost
// ledger. Every call is stored, whatever its outcome.
#pragma once

#include <cstdint>
#include <string>

namespace kernelevolve::store {

struct LlmCallRecord {
  int64_t id = -1;              // assigned by the store
  int64_t run_id = -1;
  int64_t node_id = -1;         // the node its candidate became; -1 until evaluated / none
  int64_t parent_node_id = -1;  // the node it was asked to improve; -1: a draft
  std::string purpose;          // "candidate" | "deep_search"
  std::string provider;         // "openai" | "anthropic"
  std::string model;            // as requested
  std::string base_url;         // "" = the provider's public endpoint
  std::string prompt_version;   // "v1": the prompts/ folder the text came from
  std::string prompt_hash;      // core::ContentHash(system + "\n" + user)
  std::string prompt_text;      // system and user message as sent
  std::string response_text;    // the model's text ("" when none came back)
  int64_t input_tokens = 0;     // as reported by the provider's usage
  int64_t output_tokens = 0;
  double cost_usd = 0;          // tokens at the price table's rates (+ unreadable attempts' worst case)
  double latency_seconds = 0;   // wall time of the call, retries and waits included
  int attempts = 0;             // HTTP attempts
  int http_status = 0;          // of the last attempt
  std::string outcome;          // ok | rejected | failed | fatal | stopped_by_cap
  std::string error;            // why it failed or was rejected; "" when ok
  std::string source_hash;      // of the candidate it produced; "" when none
  double created_unix_s = 0;
};

}  // namespace kernelevolve::store
