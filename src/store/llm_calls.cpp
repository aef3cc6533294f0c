// Store methods of the LLM call ledger (table llm_calls, schema v3).
#include <chrono>

#include "store/sqlite_statement.h"
#include "store/store.h"

namespace kernelevolve::store {

int64_t Store::RecordLlmCall(const LlmCallRecord& c) {
  Statement insert(db_,
                   "INSERT INTO llm_calls (run_id, node_id, parent_node_id, purpose, provider, model, "
                   "base_url, prompt_version, prompt_hash, prompt_text, response_text, input_tokens, "
                   "output_tokens, cost_usd, latency_seconds, attempts, http_status, outcome, error, "
                   "source_hash, created_unix_s) VALUES (:run_id, :node_id, :parent_node_id, :purpose, "
                   ":provider, :model, :base_url, :prompt_version, :prompt_hash, :prompt_text, "
                   ":response_text, :input_tokens, :output_tokens, :cost_usd, :latency_seconds, "
                   ":attempts, :http_status, :outcome, :error, :source_hash, :created_unix_s)",
                   path_);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  insert.Bind(":run_id", c.run_id);
  if (c.node_id >= 0) insert.Bind(":node_id", c.node_id); else insert.BindNull(":node_id");
  if (c.parent_node_id >= 0) insert.Bind(":parent_node_id", c.parent_node_id); else insert.BindNull(":parent_node_id");
  insert.Bind(":purpose", c.purpose)
      .Bind(":provider", c.provider)
      .Bind(":model", c.model)
      .Bind(":base_url", c.base_url)
      .Bind(":prompt_version", c.prompt_version)
      .Bind(":prompt_hash", c.prompt_hash)
      .Bind(":prompt_text", c.prompt_text)
      .Bind(":response_text", c.response_text)
      .Bind(":input_tokens", c.input_tokens)
      .Bind(":output_tokens", c.output_tokens)
      .Bind(":cost_usd", c.cost_usd)
      .Bind(":latency_seconds", c.latency_seconds)
      .Bind(":attempts", c.attempts)
      .Bind(":http_status", c.http_status)
      .Bind(":outcome", c.outcome)
      .Bind(":error", c.error)
      .Bind(":source_hash", c.source_hash)
      .Bind(":created_unix_s", c.created_unix_s == 0 ? now : c.created_unix_s);
  insert.Run();
  return sqlite3_last_insert_rowid(db_);
}

int Store::LinkLlmCalls(int64_t run_id, const std::string& source_hash, int64_t node_id) {
  Statement update(db_,
                   "UPDATE llm_calls SET node_id = :node_id WHERE run_id = :run_id AND "
                   "source_hash = :source_hash AND node_id IS NULL",
                   path_);
  update.Bind(":node_id", node_id).Bind(":run_id", run_id).Bind(":source_hash", source_hash);
  update.Run();
  return sqlite3_changes(db_);
}

std::vector<LlmCallRecord> Store::LoadLlmCalls(int64_t run_id) const {
  Statement q(db_, "SELECT * FROM llm_calls WHERE run_id = :run_id ORDER BY id", path_);
  q.Bind(":run_id", run_id);
  std::vector<LlmCallRecord> calls;
  while (q.Step()) {
    LlmCallRecord c;
    c.id = q.Int("id");
    c.run_id = q.Int("run_id");
    c.node_id = q.IsNull("node_id") ? -1 : q.Int("node_id");
    c.parent_node_id = q.IsNull("parent_node_id") ? -1 : q.Int("parent_node_id");
    c.purpose = q.Text("purpose");
    c.provider = q.Text("provider");
    c.model = q.Text("model");
    c.base_url = q.Text("base_url");
    c.prompt_version = q.Text("prompt_version");
    c.prompt_hash = q.Text("prompt_hash");
    c.prompt_text = q.Text("prompt_text");
    c.response_text = q.Text("response_text");
    c.input_tokens = q.Int("input_tokens");
    c.output_tokens = q.Int("output_tokens");
    c.cost_usd = q.Real("cost_usd");
    c.latency_seconds = q.Real("latency_seconds");
    c.attempts = static_cast<int>(q.Int("attempts"));
    c.http_status = static_cast<int>(q.Int("http_status"));
    c.outcome = q.Text("outcome");
    c.error = q.Text("error");
    c.source_hash = q.Text("source_hash");
    c.created_unix_s = q.Real("created_unix_s");
    calls.push_back(std::move(c));
  }
  return calls;
}

}  // namespace kernelevolve::store
