// The CPU's unique family (families/unique, codegen/cpp/unique_cpp.h): which graphs it
// takes, and every knob setting compiled and run in-process against references (hand
// written for the small cases, std::map counts for int64, a stable sort for float32):
// ties, all equal, one element, empty, negative and extreme ids, a span that makes the
// counting table give way to the radix sort, NaN / -0.0 / inf; bounded outputs with
// their size tensors, exact lengths, and the return codes.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "operators/families/unique/unique_template.h"
#include "operators/template/kernel_template.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

namespace families = operators::families;
namespace templates = operators::templates;

/// The graph the capture gives for torch.unique(x, sorted, return_inverse, return_counts)
/// returning the getitems `outputs` (0 values, 1 inverse, 2 counts) in that order.
core::OpGraph UniqueGraph(core::DType dtype, const std::vector<int>& outputs, bool inverse, bool counts,
                          bool sorted = true) {
  core::OpGraph g;
  core::OpNode x;
  x.name = "arg0_1";
  x.kind = core::OpNodeKind::kPlaceholder;
  x.abi_index = 0;
  x.shape = {100};
  x.dtype = dtype;
  g.nodes.push_back(x);
  core::OpNode u;
  u.name = "_unique2";
  u.target = "aten._unique2.default";
  u.args = {Ref("self", "arg0_1"), Val("sorted", sorted), Val("return_inverse", inverse),
            Val("return_counts", counts)};
  u.dtype = dtype;
  g.nodes.push_back(u);
  for (int i = 0; i < 3; ++i) {
    core::OpNode item;
    item.name = i == 0 ? "getitem" : "getitem_" + std::to_string(i);
    item.target = "getitem";
    item.args = {Ref("self", "_unique2"), Val("index", i)};
    item.dtype = i == 0 ? dtype : core::DType::kInt64;
    g.nodes.push_back(item);
  }
  for (int o : outputs) g.outputs.push_back(o == 0 ? "getitem" : "getitem_" + std::to_string(o));
  return g;
}

template <typename T>
struct Expected {
  std::vector<T> values;
  std::vector<int64_t> inverse;
  std::vector<int64_t> counts;
};

/// int64: distinct values by std::map (ascending), each one's count and rank.
Expected<int64_t> Reference(const std::vector<int64_t>& x) {
  std::map<int64_t, int64_t> count;
  for (int64_t v : x) ++count[v];
  Expected<int64_t> e;
  std::map<int64_t, int64_t> rank;
  for (const auto& [v, c] : count) {
    rank[v] = static_cast<int64_t>(e.values.size());
    e.values.push_back(v);
    e.counts.push_back(c);
  }
  for (int64_t v : x) e.inverse.push_back(rank[v]);
  return e;
}

/// float32: a stable sort with NaN last; a run of == values is one (each NaN its own,
/// -0.0 and +0.0 one, the first in input order kept).
Expected<float> Reference(const std::vector<float>& x) {
  std::vector<int64_t> pos(x.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
    return x[a] < x[b] || (!std::isnan(x[a]) && std::isnan(x[b]));
  });
  Expected<float> e;
  e.inverse.assign(x.size(), -1);
  for (size_t j = 0; j < pos.size(); ++j) {
    if (j == 0 || !(x[pos[j]] == x[pos[j - 1]])) {
      e.values.push_back(x[pos[j]]);
      e.counts.push_back(0);
    }
    ++e.counts.back();
    e.inverse[pos[j]] = static_cast<int64_t>(e.values.size()) - 1;
  }
  return e;
}

bool SameBits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }
bool SameBits(int64_t a, int64_t b) { return a == b; }

DLTensor Tensor(void* data, std::vector<int64_t>& shape, DLDataType dtype) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  return t;
}

/// One call of a unique kernel: its outputs (poisoned with 0x5A bytes before the call)
/// shaped as the harness shapes them. `bound` >= 0: values / counts at that bound with a
/// size tensor each; -1: at the exact length `exact`.
template <typename T>
struct Call {
  std::vector<int> outputs;
  int64_t bound = -1;
  int64_t exact = 0;
  std::vector<T> values;
  std::vector<int64_t> inverse, counts, values_size{0x5A5A}, counts_size{0x5A5A};

  int Run(platforms::cpu::EntryFn entry, std::vector<T>& x) {
    const DLDataType t_type = std::is_same_v<T, float> ? DLDataType{kDLFloat, 32, 1} : DLDataType{kDLInt, 64, 1};
    const DLDataType i64 = {kDLInt, 64, 1};
    const int64_t length = bound >= 0 ? bound : exact;
    values.assign(length, T{});
    counts.assign(length, 0);
    inverse.assign(x.size(), 0);
    std::memset(values.data(), 0x5A, values.size() * sizeof(T));
    std::memset(counts.data(), 0x5A, counts.size() * sizeof(int64_t));
    std::memset(inverse.data(), 0x5A, inverse.size() * sizeof(int64_t));
    x_shape = {static_cast<int64_t>(x.size())};
    length_shape = {length};
    DLTensor in = Tensor(x.data(), x_shape, t_type);
    std::vector<DLTensor> out;
    std::vector<DLTensor> sizes;
    for (int o : outputs) {
      if (o == 0) out.push_back(Tensor(values.data(), length_shape, t_type));
      if (o == 1) out.push_back(Tensor(inverse.data(), x_shape, i64));
      if (o == 2) out.push_back(Tensor(counts.data(), length_shape, i64));
      if (o != 1 && bound >= 0) sizes.push_back(Tensor(o == 0 ? values_size.data() : counts_size.data(), one, i64));
    }
    out.insert(out.end(), sizes.begin(), sizes.end());
    return entry(&in, 1, out.data(), static_cast<int32_t>(out.size()));
  }

  std::vector<int64_t> x_shape, length_shape, one{1};
};

/// Runs `entry` on `x` (bounded at x.size() + 3 and, when the values fit, exactly) and
/// compares every returned output with the reference; `what` names the case.
template <typename T>
void Check(platforms::cpu::EntryFn entry, const std::vector<int>& outputs, std::vector<T> x, const std::string& what) {
  const auto e = Reference(x);
  const int64_t groups = static_cast<int64_t>(e.values.size());
  for (const int64_t bound : {static_cast<int64_t>(x.size()) + 3, int64_t{-1}}) {
    Call<T> call;
    call.outputs = outputs;
    call.bound = bound;
    call.exact = groups;
    const std::string where = what + (bound >= 0 ? " (bounded)" : " (exact length)");
    ASSERT_EQ(call.Run(entry, x), 0) << where;
    for (int o : outputs) {
      if (o == 0) {
        if (bound >= 0) EXPECT_EQ(call.values_size[0], groups) << where;
        for (int64_t g = 0; g < groups; ++g) {
          ASSERT_TRUE(SameBits(call.values[g], e.values[g])) << where << ": values[" << g << "] = " << call.values[g]
                                                             << ", expected " << e.values[g];
        }
      } else if (o == 1) {
        ASSERT_EQ(call.inverse, e.inverse) << where << ": inverse";
      } else {
        if (bound >= 0) EXPECT_EQ(call.counts_size[0], groups) << where;
        ASSERT_EQ(std::vector<int64_t>(call.counts.begin(), call.counts.begin() + groups), e.counts) << where;
      }
    }
  }
}

/// The int64 inputs every setting runs on.
std::vector<std::pair<std::string, std::vector<int64_t>>> Int64Cases() {
  std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"ties", {3, -1, 3, 7, -1, 3}},
      {"one element", {42}},
      {"empty", {}},
      {"all equal", std::vector<int64_t>(1000, -5)},
      {"extremes", {std::numeric_limits<int64_t>::max(), 0, std::numeric_limits<int64_t>::min(), -1,
                    std::numeric_limits<int64_t>::max(), 1}},
  };
  std::mt19937_64 gen(7);
  std::vector<int64_t> narrow(5000), wide(3001), skewed(20000), neg(4000);
  for (auto& v : narrow) v = static_cast<int64_t>(gen() % 101) - 50;  // many ties
  for (auto& v : wide) v = static_cast<int64_t>(gen() % 2000000000000ull) - 1000000000000;  // counting -> radix
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& v : skewed) v = static_cast<int64_t>(std::pow(u(gen), 3) * 100000);  // unique_ids_counts' ids
  for (auto& v : neg) v = -static_cast<int64_t>(gen() % 3000) - 7;
  cases.push_back({"narrow", narrow});
  cases.push_back({"wide", wide});
  cases.push_back({"skewed", skewed});
  cases.push_back({"negative ids", neg});
  return cases;
}

std::vector<std::pair<std::string, std::vector<float>>> FloatCases() {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"nan and zeros", {1.0f, nan, -0.0f, 0.0f, nan, -1.0f}},
      {"one element", {nan}},
      {"empty", {}},
  };
  std::mt19937 gen(3);
  std::vector<float> mixed(4000);
  for (auto& v : mixed) {
    const uint32_t r = gen() % 16;
    const float number = static_cast<float>(static_cast<int>(gen() % 200) - 100) * 0.5f;  // ties
    v = r == 0 ? nan : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? inf : r == 4 ? -inf : number;
  }
  cases.push_back({"mixed", mixed});
  return cases;
}

/// Every setting of the family for `graph`, compiled (two at a time).
struct Kernels {
  std::vector<nlohmann::json> settings;
  std::vector<std::unique_ptr<LoadedKernel>> loaded;
};

Kernels CompileSettings(const core::OpGraph& graph, std::vector<nlohmann::json> settings = {}) {
  const auto match = families::MatchUnique(graph, /*multithread=*/true);
  if (!match || !match->tmpl) {
    ADD_FAILURE() << "the unique family refused the graph";
    return {};
  }
  Kernels k;
  k.settings = settings.empty() ? match->tmpl->Space().Enumerate() : std::move(settings);
  std::vector<std::string> sources;
  for (const auto& s : k.settings) sources.push_back(match->tmpl->Generate(s));
  k.loaded = CompileAll(sources);
  return k;
}

/// Runs every case on every kernel, on 1 to 4 OpenMP threads where it uses them.
template <typename T>
void CheckAll(const Kernels& k, const std::vector<int>& outputs,
              const std::vector<std::pair<std::string, std::vector<T>>>& cases) {
  const int saved = omp_get_max_threads();
  for (size_t i = 0; i < k.loaded.size(); ++i) {
    ASSERT_NE(k.loaded[i]->entry, nullptr) << k.settings[i].dump() << "\n" << k.loaded[i]->log;
    const bool threads = k.settings[i].at("threads") == "all";
    for (int t = 1; t <= (threads ? 4 : 1); ++t) {
      omp_set_num_threads(threads ? t : saved);
      for (const auto& [name, x] : cases) {
        Check<T>(k.loaded[i]->entry, outputs, x,
                 k.settings[i].dump() + ", " + std::to_string(t) + " threads, case " + name);
      }
    }
  }
  omp_set_num_threads(saved);
}

TEST(UniqueFamily, TakesTheCapturedUniqueAndNothingElse) {
  // What the capture gives for problems/recsys: unique_ids_counts (all three) and
  // dedup_jagged_ids (flags false, only getitem 0 returned).
  const auto all = families::MatchUnique(UniqueGraph(core::DType::kInt64, {0, 1, 2}, true, true), true);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->tmpl->Name(), "unique");
  core::Problem dedup;
  dedup.graph = UniqueGraph(core::DType::kInt64, {0}, false, false);
  const auto picked = templates::MatchTemplate(dedup, 2);
  ASSERT_TRUE(picked.tmpl != nullptr) << picked.unsupported;
  EXPECT_EQ(picked.tmpl->Name(), "unique");
  // Counting only for integers.
  EXPECT_EQ(all->tmpl->Space().Enumerate().size(), 10u);  // (stable_sort, introsort, counting) x 2 + radix x 2 x 2
  const auto floats = families::MatchUnique(UniqueGraph(core::DType::kFloat32, {0}, false, false), true);
  ASSERT_TRUE(floats.has_value());
  EXPECT_EQ(floats->tmpl->Space().Enumerate().size(), 8u);
  // Refused: sorted=False (order left to the implementation), an inverse or counts output
  // without its flag, another dtype, another op in the graph.
  EXPECT_FALSE(families::MatchUnique(UniqueGraph(core::DType::kInt64, {0}, false, false, false), true));
  EXPECT_FALSE(families::MatchUnique(UniqueGraph(core::DType::kInt64, {0, 1}, false, true), true));
  EXPECT_FALSE(families::MatchUnique(UniqueGraph(core::DType::kInt32, {0}, false, false), true));
  core::OpGraph chain = UniqueGraph(core::DType::kInt64, {0}, false, false);
  core::OpNode add;
  add.name = "add";
  add.target = "aten.add.Tensor";
  add.args = {Ref("self", "getitem"), Ref("other", "getitem")};
  chain.nodes.push_back(add);
  chain.outputs = {"add"};
  EXPECT_FALSE(families::MatchUnique(chain, true));
  // The source reads the length from the tensor and reports the bound's overflow.
  const std::string source = all->tmpl->Generate(all->tmpl->Drafts().front());
  EXPECT_NE(source.find("const int64_t n = ke_numel(X);"), std::string::npos) << source;
  EXPECT_NE(source.find("if (groups > o.length[k]) return 5;"), std::string::npos) << source;
}

TEST(UniqueFamily, EveryInt64SettingMatchesTheReference) {
  const auto cases = Int64Cases();
  const Kernels all = CompileSettings(UniqueGraph(core::DType::kInt64, {0, 1, 2}, true, true));
  CheckAll<int64_t>(all, {0, 1, 2}, cases);
  const Kernels values = CompileSettings(UniqueGraph(core::DType::kInt64, {0}, false, false));
  CheckAll<int64_t>(values, {0}, cases);
  // Other subsets and orders, on the settings whose code differs by output.
  const std::vector<nlohmann::json> some = {{{"algorithm", "counting"}, {"threads", "1"}},
                                            {{"algorithm", "counting"}, {"threads", "all"}},
                                            {{"algorithm", "radix"}, {"threads", "all"}},
                                            {{"algorithm", "stable_sort"}, {"threads", "all"}}};
  CheckAll<int64_t>(CompileSettings(UniqueGraph(core::DType::kInt64, {2, 1}, true, true), some), {2, 1}, cases);
  CheckAll<int64_t>(CompileSettings(UniqueGraph(core::DType::kInt64, {0, 2}, false, true), some), {0, 2}, cases);
}

TEST(UniqueFamily, EveryFloat32SettingMatchesTheReference) {
  // torch.unique(torch.tensor([1., nan, -0., 0., nan, -1.]), return_inverse=True,
  // return_counts=True) by hand: [-1, -0, 1, nan, nan], [2, 3, 1, 1, 4, 0], [1, 2, 1, 1, 1].
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto e = Reference(std::vector<float>{1.0f, nan, -0.0f, 0.0f, nan, -1.0f});
  ASSERT_EQ(e.values.size(), 5u);
  EXPECT_TRUE(SameBits(e.values[1], -0.0f));
  EXPECT_EQ(e.inverse, (std::vector<int64_t>{2, 3, 1, 1, 4, 0}));
  EXPECT_EQ(e.counts, (std::vector<int64_t>{1, 2, 1, 1, 1}));
  const Kernels all = CompileSettings(UniqueGraph(core::DType::kFloat32, {0, 1, 2}, true, true));
  CheckAll<float>(all, {0, 1, 2}, FloatCases());
  const Kernels values = CompileSettings(UniqueGraph(core::DType::kFloat32, {0}, false, false),
                                         {{{"algorithm", "radix"}, {"threads", "all"}},
                                          {{"algorithm", "introsort"}, {"threads", "1"}}});
  CheckAll<float>(values, {0}, FloatCases());
}

TEST(UniqueFamily, HandWrittenInt64Result) {
  // x = [3, -1, 3, 7, -1, 3]: values [-1, 3, 7], inverse [1, 0, 1, 2, 0, 1], counts [2, 3, 1].
  const auto e = Reference(std::vector<int64_t>{3, -1, 3, 7, -1, 3});
  EXPECT_EQ(e.values, (std::vector<int64_t>{-1, 3, 7}));
  EXPECT_EQ(e.inverse, (std::vector<int64_t>{1, 0, 1, 2, 0, 1}));
  EXPECT_EQ(e.counts, (std::vector<int64_t>{2, 3, 1}));
}

TEST(UniqueFamily, ReturnCodes) {
  // 1 wrong tensor count, 2 wrong dtype or rank, 3 a wrong shape (inverse, size tensor,
  // exact length), 4 strides not dense, 5 a bound smaller than the distinct values.
  const Kernels k = CompileSettings(UniqueGraph(core::DType::kInt64, {0, 1, 2}, true, true),
                                    {{{"algorithm", "counting"}, {"threads", "1"}},
                                     {{"algorithm", "radix"}, {"threads", "all"}}});
  for (size_t i = 0; i < k.loaded.size(); ++i) {
    ASSERT_NE(k.loaded[i]->entry, nullptr) << k.loaded[i]->log;
    const auto entry = k.loaded[i]->entry;
    const std::string what = k.settings[i].dump();
    std::vector<int64_t> x = {5, 1, 5, 2, 9, 1};  // 4 distinct values
    Call<int64_t> call;
    call.outputs = {0, 1, 2};
    call.bound = 4;
    EXPECT_EQ(call.Run(entry, x), 0) << what;
    call.bound = 3;
    EXPECT_EQ(call.Run(entry, x), 5) << what << ": a bound of 3 for 4 distinct values";
    call.bound = -1;
    call.exact = 5;
    EXPECT_EQ(call.Run(entry, x), 3) << what << ": an exact length of 5 for 4 distinct values";
    // Hand-built calls for the layout errors.
    std::vector<int64_t> xs = {6}, n4 = {4}, one = {1}, two = {2}, five = {5};
    std::vector<int64_t> values(4), inverse(6), counts(4), s0(2), s2(1);
    const DLDataType i64 = {kDLInt, 64, 1};
    DLTensor in = Tensor(x.data(), xs, i64);
    std::vector<DLTensor> out = {Tensor(values.data(), n4, i64), Tensor(inverse.data(), xs, i64),
                                 Tensor(counts.data(), n4, i64), Tensor(s0.data(), one, i64),
                                 Tensor(s2.data(), one, i64)};
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 0) << what;
    EXPECT_EQ(entry(&in, 1, out.data(), 4), 1) << what << ": 4 outputs";
    EXPECT_EQ(entry(&in, 0, out.data(), 5), 1) << what << ": no input";
    out[3].shape = two.data();
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 3) << what << ": a size tensor of shape [2]";
    out[3].shape = one.data();
    out[1].shape = five.data();
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 3) << what << ": an inverse of another length";
    out[1].shape = xs.data();
    out[2].dtype = {kDLInt, 32, 1};
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 2) << what << ": int32 counts";
    out[2].dtype = i64;
    in.dtype = {kDLFloat, 32, 1};
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 2) << what << ": a float32 input to an int64 kernel";
    in.dtype = i64;
    std::vector<int64_t> stride = {2};
    in.strides = stride.data();
    EXPECT_EQ(entry(&in, 1, out.data(), 5), 4) << what << ": a strided input";
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
