#include "operators/template/knob_space.h"

#include <algorithm>

#include "core/error.h"
#include "operators/template/knob_vocabulary.h"

namespace kernelevolve::operators::templates {
namespace {

bool Contains(const std::vector<nlohmann::json>& values, const nlohmann::json& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

std::string KnobText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

KnobSpace::KnobSpace(std::vector<KnobDim> dims) : dims_(std::move(dims)) {
  for (size_t i = 0; i < dims_.size(); ++i) {
    const KnobDim& d = dims_[i];
    if (FindKnobWord(d.name) == nullptr) {
      throw core::InternalError("knob '" + d.name +
                                "' is not in the knob vocabulary (operators/template/knob_vocabulary.cpp)");
    }
    if (d.values.empty() || !Contains(d.values, d.default_value)) {
      throw core::InternalError("knob '" + d.name + "': default " + d.default_value.dump() +
                                " is not one of its values");
    }
    if (d.requires_name.empty()) continue;
    bool found = false;
    for (size_t j = 0; j < i; ++j) found = found || dims_[j].name == d.requires_name;
    if (!found) {
      throw core::InternalError("knob '" + d.name + "' requires '" + d.requires_name +
                                "', which is not a knob listed before it");
    }
  }
}

const KnobDim* KnobSpace::Find(const std::string& name) const {
  for (const auto& d : dims_) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

bool KnobSpace::Relevant(const KnobDim& dim, const nlohmann::json& knobs) const {
  if (dim.requires_name.empty()) return true;
  return knobs.contains(dim.requires_name) && knobs.at(dim.requires_name) == dim.requires_value;
}

nlohmann::json KnobSpace::Fit(const nlohmann::json& knobs) const {
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& [name, value] : knobs.items()) {
    const KnobDim* d = Find(name);
    if (d != nullptr && Contains(d->values, value)) kept[name] = value;
  }
  return Canonical(kept);
}

nlohmann::json KnobSpace::Canonical(const nlohmann::json& knobs) const {
  if (!knobs.is_object()) {
    throw core::InvalidInputError("knobs: expected a JSON object, got " + knobs.dump());
  }
  for (const auto& [name, value] : knobs.items()) {
    const KnobDim* d = Find(name);
    if (d == nullptr) throw core::InvalidInputError("knobs: unknown knob '" + name + "'");
    if (!Contains(d->values, value)) {
      nlohmann::json allowed = d->values;
      throw core::InvalidInputError("knobs: '" + name + "' = " + value.dump() +
                                    " is not allowed; use one of " + allowed.dump());
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& d : dims_) {
    if (!Relevant(d, out)) continue;
    out[d.name] = knobs.contains(d.name) ? knobs.at(d.name) : d.default_value;
  }
  return out;
}

bool KnobSpace::IsValid(const nlohmann::json& knobs) const {
  try {
    Canonical(knobs);
    return true;
  } catch (const core::InvalidInputError&) {
    return false;
  }
}

std::vector<nlohmann::json> KnobSpace::Enumerate() const {
  std::vector<nlohmann::json> partial = {nlohmann::json::object()};
  for (const auto& d : dims_) {
    std::vector<nlohmann::json> next;
    for (const auto& p : partial) {
      if (!Relevant(d, p)) {
        next.push_back(p);
        continue;
      }
      for (const auto& v : d.values) {
        nlohmann::json q = p;
        q[d.name] = v;
        next.push_back(std::move(q));
      }
    }
    partial = std::move(next);
  }
  return partial;
}

std::vector<KnobMove> KnobSpace::Neighbours(const nlohmann::json& knobs) const {
  std::vector<KnobMove> moves;
  for (const auto& d : dims_) {
    if (!knobs.contains(d.name)) continue;
    for (const auto& v : d.values) {
      if (v == knobs.at(d.name)) continue;
      nlohmann::json changed = knobs;
      changed[d.name] = v;
      // Drop knobs that were only relevant under the old value; Canonical refills.
      for (const auto& dep : dims_) {
        if (dep.requires_name == d.name) changed.erase(dep.name);
      }
      moves.push_back({d.name, v, Canonical(changed)});
    }
  }
  return moves;
}

int KnobSpace::Distance(const nlohmann::json& a, const nlohmann::json& b) const {
  int distance = 0;
  for (const auto& d : dims_) {
    const bool in_a = a.contains(d.name);
    const bool in_b = b.contains(d.name);
    if (in_a != in_b || (in_a && a.at(d.name) != b.at(d.name))) ++distance;
  }
  return distance;
}

std::string KnobSpace::Phrase(const std::string& dim, const nlohmann::json& value) const {
  const KnobDim* d = Find(dim);
  const std::string text = KnobText(value);
  if (d == nullptr || d->phrase.empty()) return dim + " " + text;
  std::string out = d->phrase;
  const auto at = out.find("{}");
  if (at != std::string::npos) out.replace(at, 2, text);
  return out;
}

std::string KnobSpace::Describe(const nlohmann::json& knobs) const {
  std::string out;
  for (const auto& d : dims_) {
    if (!knobs.contains(d.name)) continue;
    if (!out.empty()) out += ", ";
    out += Phrase(d.name, knobs.at(d.name));
  }
  return out;
}

namespace {

KnobDim ThreadsDim(bool multithread) {
  std::vector<nlohmann::json> values = {"1"};
  if (multithread) values.push_back("all");
  return {
      "threads", values,  "1",         "1", multithread ? nlohmann::json("all") : nlohmann::json(),
      "",        nullptr, "threads={}"};
}

}  // namespace

KnobSpace PointwiseKnobSpace(bool multithread, int vector_lanes, bool explicit_simd_math) {
  std::vector<KnobDim> dims = {
      // "on": `#pragma omp simd` loops calling the vectorizable math prelude; "off":
      // plain loops calling std:: math (a libm call keeps a loop scalar).
      {"simd", {"off", "on"}, "off", "off", "on", "", nullptr, "omp simd {}"},
      ThreadsDim(multithread),
      {"block",
       {4096, 16384, 65536},
       16384,
       nullptr,
       nullptr,
       "threads",
       "all",
       "{}-element blocks"},
      {"unroll", {1, 2, 4}, 1, 1, nullptr, "", nullptr, "{}x unroll"},
  };
  if (vector_lanes >= 16) {
    // AVX-512: 512-bit vectors, or 256-bit ones (what GCC's Intel tunings prefer, and
    // on parts that lower their clock for 512-bit instructions the faster choice).
    dims.push_back({"vector_width", {vector_lanes, vector_lanes / 2}, vector_lanes, vector_lanes / 2, nullptr,
                    "simd", "on", "{}-float vectors"});
    if (explicit_simd_math) {
      // 512-bit loops only: the intrinsics variants (ke_log_v16) take 16 lanes.
      dims.push_back({"math", {"vectorized", "avx512"}, "vectorized", "vectorized", nullptr, "vector_width",
                      vector_lanes, "{} math"});
    }
  }
  return KnobSpace(std::move(dims));
}

KnobSpace SoftmaxKnobSpace(bool multithread) {
  return KnobSpace({
      {"algorithm",
       {"three_pass", "online", "two_pass_store"},
       "three_pass",
       "three_pass",
       nullptr,
       "",
       nullptr,
       "{} softmax"},
      {"math", {"libm", "vectorized"}, "libm", "libm", "vectorized", "", nullptr, "{} math"},
      ThreadsDim(multithread),
      {"block_rows", {1, 4, 16}, 4, nullptr, nullptr, "threads", "all", "{}-row chunks"},
  });
}

KnobDim ThreadsKnob(bool multithread) {
  return {"threads", multithread ? std::vector<nlohmann::json>{"1", "all"} : std::vector<nlohmann::json>{"1"},
          "1", "1", multithread ? nlohmann::json("all") : nlohmann::json(), "", nullptr, "{} threads"};
}

KnobDim InputPrecisionKnob(bool tf32) {
  std::vector<nlohmann::json> values = {"ieee", "tf32x3"};
  if (tf32) values.push_back("tf32");
  return {"input_precision", std::move(values), "ieee", "ieee", "tf32x3", "", nullptr, "{} dot products"};
}

std::vector<nlohmann::json> KnobValuesUpTo(const std::vector<int64_t>& all, int64_t cap) {
  std::vector<nlohmann::json> out;
  for (int64_t v : all) {
    if (v <= cap || out.empty()) out.push_back(v);
  }
  return out;
}

nlohmann::json NearestKnobValue(const std::vector<nlohmann::json>& values, int64_t want) {
  nlohmann::json best = values.front();
  for (const auto& v : values) {
    if (v.get<int64_t>() <= want) best = v;
  }
  return best;
}

}  // namespace kernelevolve::operators::templates
