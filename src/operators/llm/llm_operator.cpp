#include "operators/llm/llm_operator.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "core/candidate.h"
#include "core/error.h"
#include "operators/llm/response_parser.h"

namespace kernelevolve::operators::llm {
namespace {

std::vector<std::string> ArmIds(const std::vector<std::unique_ptr<Provider>>& providers) {
  std::vector<std::string> ids;
  for (const auto& p : providers) ids.push_back(p->Id());
  return ids;
}

const std::vector<std::unique_ptr<Provider>>& RequireProviders(const LlmOperatorOptions& o) {
  if (o.providers.empty()) throw core::InvalidInputError("the LLM operator needs at least one --llm PROVIDER:MODEL");
  return o.providers;
}

void RealSleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

LlmOperator::LlmOperator(LlmOperatorOptions options, store::Store& store, int64_t run_id,
                         const knowledge::KnowledgeBase* kb)
    : options_(std::move(options)), store_(store), run_id_(run_id), kb_(kb),
      prompts_(PromptLibrary::Load(options_.prompt_dir.empty() ? DefaultPromptDir() : options_.prompt_dir)),
      protocol_(ProtocolFor(options_.target)),
      ledger_(options_.max_cost_usd), bandit_(ArmIds(RequireProviders(options_))), rng_(options_.seed) {
  if (!options_.sleep) options_.sleep = RealSleep;
  prompts_.AbiTemplate(protocol_);  // a folder without this target's ABI fails now, not at the first call
  for (const auto& p : options_.providers) {
    std::optional<ModelPrice> price = options_.prices.Find(p->Id());
    if (!price && options_.max_cost_usd > 0) {
      throw core::InvalidInputError(fmt::format(
          "--max-cost: no price for {} in {}; add \"{}\": {{\"input_per_mtok\": X, \"output_per_mtok\": Y}} "
          "to its \"models\" (0 for a free local model), or give another file with --llm-prices",
          p->Id(), options_.prices.Path().string(), p->Id()));
    }
    prices_.push_back(price.value_or(ModelPrice{}));
  }
  // A resumed run continues its ledger and its bandit.
  for (const store::LlmCallRecord& c : store_.LoadLlmCalls(run_id_)) {
    ledger_.Add(c.cost_usd, {c.input_tokens, c.output_tokens});
    ++calls_;
    if (c.outcome != "ok" && c.outcome != "stopped_by_cap") {
      if (int arm = bandit_.Find(c.provider + ":" + c.model); arm >= 0) bandit_.RecordNothing(arm);
    }
  }
  search::Tree tree;
  std::vector<search::Node> nodes = store_.LoadNodes(run_id_);
  for (const search::Node& n : nodes) tree.Add(n);
  for (const search::Node& n : nodes) OnEvaluated(n, tree);
}

std::string LlmOperator::Name() const {
  std::string name = "llm:";
  for (size_t i = 0; i < bandit_.arms().size(); ++i) name += (i ? "," : "") + bandit_.arms()[i];
  return name;
}

std::optional<std::string> LlmOperator::Unsupported(const core::Problem& problem) const {
  if (problem.outputs.empty()) return std::string("unsupported_graph: the problem has no outputs");
  return std::nullopt;
}

std::optional<std::string> LlmOperator::StopReason() const {
  return ledger_.cap_reached() ? std::optional<std::string>("cost_cap") : std::nullopt;
}

std::vector<core::Candidate> LlmOperator::Propose(const OperatorContext& context, int n) {
  if (!context.problem) throw core::InternalError("LlmOperator::Propose: context.problem is null");
  std::vector<core::Candidate> out;
  std::set<std::string> produced;
  for (int i = 0; i < n && !ledger_.cap_reached(); ++i) {
    if (auto c = ProposeOne(context, context.parent ? 0 : i, produced)) out.push_back(std::move(*c));
  }
  return out;
}

bool LlmOperator::DeepSearchDue(const OperatorContext& context) const {
  if (context.clean_slate) return true;
  if (options_.deep_search_after <= 0 || !context.parent) return false;
  return evaluations_ - last_improvement_ >= options_.deep_search_after &&
         (last_deep_search_ < 0 || evaluations_ - last_deep_search_ >= options_.deep_search_after);
}

std::vector<knowledge::Passage> LlmOperator::Retrieve(const OperatorContext& context, const Diagnosis& diagnosis,
                                                      bool deep) const {
  if (!kb_) return {};
  knowledge::RetrievalQuery q;
  q.text = context.problem->name + " kernel " + diagnosis.headline;
  for (const core::OpNode* call : context.problem->graph.Calls()) q.text += " " + call->target;
  if (protocol_.target != "cpu") q.text += " " + protocol_.target + " gpu";
  q.platform = protocol_.target;
  q.phase = context.parent && !context.clean_slate ? diagnosis.phase : "draft";
  q.bottleneck = diagnosis.bottleneck;
  q.k = deep ? 2 * options_.retrieve_k : options_.retrieve_k;
  q.token_budget = deep ? 4000 : 1500;
  try {
    return kb_->Retrieve(q);
  } catch (const std::exception&) {
    return {};  // retrieval is help, never a reason to fail a call
  }
}

std::optional<core::Candidate> LlmOperator::ProposeOne(const OperatorContext& context, int draft_index,
                                                       std::set<std::string>& produced) {
  const bool has_parent = context.parent && !context.clean_slate;
  const bool deep = DeepSearchDue(context);
  if (deep) last_deep_search_ = evaluations_;
  PromptInputs inputs;
  inputs.context = &context;
  inputs.hardware = options_.hardware;
  inputs.protocol = &protocol_;
  inputs.tolerance_overrides = options_.tolerance_overrides;
  if (has_parent) inputs.diagnosis = Diagnose(*context.parent, *context.problem);
  inputs.passages = Retrieve(context, inputs.diagnosis, deep);
  inputs.deep_search = deep;
  inputs.stall = context.clean_slate ? "a clean slate was asked for after evaluations without improvement"
                                     : fmt::format("{} evaluations without an improvement of 1%",
                                                   evaluations_ - last_improvement_);
  inputs.draft_index = draft_index;
  const Prompt prompt = BuildPrompt(prompts_, inputs);
  ChatRequest chat{prompt.system, prompt.user, deep ? 2 * options_.max_tokens : options_.max_tokens,
                   options_.temperature};
  const std::string parent_source = has_parent ? context.parent->candidate.source : "";

  for (int call = 0; call < std::max(1, options_.calls_per_candidate); ++call) {
    const size_t arm = bandit_.Choose();
    const Provider& provider = *options_.providers[arm];
    const ModelPrice& price = prices_[arm];
    const double worst = CostUsd(price, {MaxInputTokens(chat.system.size() + chat.user.size(), 2), chat.max_tokens});
    CallResult result = Complete(
        provider, chat, options_.retry, rng_, options_.sleep,
        [&](int) { return ledger_.Refuse(worst * 1.0); });
    const TokenUsage usage{result.response.input_tokens, result.response.output_tokens};
    // A 200 whose body could not be read may have been billed: charge its worst case.
    const double cost = CostUsd(price, usage) + worst * result.unreadable_attempts;
    ledger_.Add(cost, usage);
    ++calls_;

    store::LlmCallRecord rec;
    rec.run_id = run_id_;
    rec.parent_node_id = has_parent ? context.parent->id : -1;
    rec.purpose = deep ? "deep_search" : "candidate";
    rec.provider = provider.Config().provider;
    rec.model = provider.Config().model;
    rec.base_url = provider.Config().base_url;
    rec.prompt_version = prompt.version;
    rec.prompt_hash = core::ContentHash(prompt.system + "\n" + prompt.user);
    rec.prompt_text = "[system]\n" + prompt.system + "\n[user]\n" + prompt.user;
    rec.response_text = result.response.text;
    rec.input_tokens = usage.input_tokens;
    rec.output_tokens = usage.output_tokens;
    rec.cost_usd = cost;
    rec.latency_seconds = result.seconds;
    rec.attempts = result.attempts;
    rec.http_status = result.http_status;
    rec.outcome = CallStatusName(result.status);
    rec.error = result.error;
    for (const std::string& line : result.attempt_log) rec.error += (rec.error.empty() ? "" : "\n") + line;

    if (result.status == CallStatus::kStoppedByCap) {
      ledger_.MarkCapReached();
      cap_message_ = result.error;
      store_.RecordLlmCall(rec);
      return std::nullopt;
    }
    if (result.status == CallStatus::kFatal) {
      store_.RecordLlmCall(rec);
      throw core::InvalidInputError(result.error);
    }
    if (result.status == CallStatus::kFailed) {
      // Issue 22: kept for the run's end, where "exhausted" alone hid an unreachable server.
      last_failure_ = fmt::format("the LLM server {} ({}) did not answer: {}",
                                  provider.BuildRequest(chat).url, provider.Id(), result.error);
      store_.RecordLlmCall(rec);
      bandit_.RecordNothing(arm);
      return std::nullopt;  // retries are used up: the network or the server is not fit now
    }
    last_failure_.clear();  // the server answered
    ParsedResponse parsed = ParseResponse(result.response.text, parent_source, protocol_);
    std::string hash = parsed.ok ? core::ContentHash(parsed.source) : "";
    if (parsed.ok && ((context.seen_hashes && context.seen_hashes->count(hash)) || produced.count(hash))) {
      parsed.ok = false;
      parsed.reason = "the kernel repeats one already in the search tree";
    }
    if (!parsed.ok) {
      rec.outcome = "rejected";
      rec.error = parsed.reason;
      store_.RecordLlmCall(rec);
      bandit_.RecordNothing(arm);
      continue;
    }
    rec.source_hash = hash;
    const int64_t call_id = store_.RecordLlmCall(rec);
    produced.insert(hash);
    core::Candidate c;
    c.source = std::move(parsed.source);
    c.operator_name = "llm:" + provider.Id();
    c.knobs = {{"model", provider.Id()}, {"llm_call_id", call_id},  {"cost_usd", cost},
               {"prompt_version", prompt.version}, {"form", parsed.form}, {"purpose", rec.purpose}};
    c.rationale = parsed.rationale.empty() ? fmt::format("written by {}", provider.Id()) : parsed.rationale;
    if (deep) c.rationale = "deep search: " + c.rationale;
    return c;
  }
  return std::nullopt;
}

void LlmOperator::Credit(const search::Node& node, double parent_fitness) {
  const auto& knobs = node.candidate.knobs;
  if (!knobs.is_object() || !knobs.contains("model")) return;
  const int arm = bandit_.Find(knobs["model"].get<std::string>());
  if (arm < 0) return;
  bandit_.Record(static_cast<size_t>(arm), node.evaluation.fitness - parent_fitness, knobs.value("cost_usd", 0.0));
}

void LlmOperator::OnEvaluated(const search::Node& node, const search::Tree& tree) {
  if (!credited_.insert(node.id).second) return;
  ++evaluations_;
  const double fitness = node.evaluation.fitness;
  if (fitness > 0 && fitness >= best_fitness_ * 1.01) {
    last_improvement_ = evaluations_;
  }
  best_fitness_ = std::max(best_fitness_, fitness);
  if (node.candidate.operator_name.rfind("llm:", 0) != 0) return;
  store_.LinkLlmCalls(run_id_, node.source_hash, node.id);
  const double parent_fitness =
      node.parent_id >= 0 && tree.Contains(node.parent_id) ? tree.Get(node.parent_id).evaluation.fitness : 0.0;
  Credit(node, parent_fitness);
}

}  // namespace kernelevolve::operators::llm
