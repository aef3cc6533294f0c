// A kernel template bound to one problem: its knob space, its drafts and its code
// generator; plus the ABI glue every generated source shares.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/problem.h"
#include "operators/template/knob_space.h"

namespace kernelevolve::operators::templates {

class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;
  /// "pointwise", "softmax_lastdim" or "rowwise" (Candidate::template_name).
  virtual std::string Name() const = 0;
  virtual const KnobSpace& Space() const = 0;
  /// Curated first settings, most trusted first (the scalar / libm baseline first);
  /// canonical, possibly repeating once the space is restricted.
  virtual std::vector<nlohmann::json> Drafts() const = 0;
  /// One line saying what a setting is, for a draft's rationale, e.g.
  /// "vectorized exp prelude, all 2 threads, 16384-element blocks".
  virtual std::string Summary(const nlohmann::json& knobs) const = 0;
  /// The complete C++17 translation unit for a canonical setting. Throws
  /// InvalidInputError for a setting outside Space().
  virtual std::string Generate(const nlohmann::json& knobs) const = 0;
};

/// A template bound to what its matcher found in the graph (`Spec`: a family's spec,
/// e.g. ir::SortSpec or ir::AttentionSpec, or the ir::Region of the reduction
/// templates) with the knob space built for it. The CPU, Triton and CUDA templates of a
/// family derive from it with the same spec and give Name, Drafts, Summary, Generate.
template <class Spec>
class SpecTemplate : public KernelTemplate {
 public:
  const KnobSpace& Space() const final { return space_; }
  const Spec& spec() const { return spec_; }

 protected:
  SpecTemplate(Spec spec, KnobSpace space) : spec_(std::move(spec)), space_(std::move(space)) {}

  Spec spec_;
  KnobSpace space_;
};

/// A template for a problem, or why none applies.
struct TemplateMatch {
  std::unique_ptr<KernelTemplate> tmpl;  // null when unsupported
  std::string unsupported;               // "unsupported_op: aten.NAME", ... when null
};

/// The answer of every target's matcher for a problem without a captured op graph:
/// the loader's "unsupported_dtype: ..." reason as is (a complex intermediate from
/// torch.fft), else "unsupported_graph: the problem has no captured op graph (WHY)".
TemplateMatch NoGraphMatch(const core::Problem& problem);

/// Picks the template covering `problem.graph`: softmax_lastdim when the only call
/// is a softmax/log_softmax over the last dim, else pointwise for same-shape
/// elementwise graphs, else rowwise (reductions, norms, losses, broadcasting), else
/// loop_nest (families/loop_nest: any graph the Core ATen lowering accepts, as a
/// program of loop-nest kernels; its reason, "unsupported_op: aten.NAME (node N)",
/// is returned when nothing applies). `threads` is the thread count the
/// runner gives candidates; with 1 the space has no multi-threaded settings.
/// `vector_lanes`: float32 lanes of the machine's widest vector (core::CpuIsa::
/// FloatLanes); 16 gives the pointwise template its vector_width knob.
TemplateMatch MatchTemplate(const core::Problem& problem, int threads, int vector_lanes = 8);

/// "// " comment block shared by generated sources: what it computes (`what`,
/// several lines allowed), the template, the knobs, the ABI, return codes and the
/// build line.
std::string GeneratedHeader(const std::string& template_name, const std::string& what,
                            const nlohmann::json& knobs, const std::string& abi_lines);

/// The #include lines every generated source starts with (dlpack, <algorithm>,
/// <cmath>, <cstdint>, <cstring>).
std::string GeneratedIncludes();

/// ABI helper functions pasted into generated sources: `ke_float_data(t)` (float
/// pointer of a DLTensor, byte_offset applied), `ke_numel(t)`, `ke_check_layout(t)`
/// returning 0, or 2 (not on the CPU, or no data) or 4 (strides given and not dense
/// row-major), `ke_check_tensor(t)`: 2 unless float32, else ke_check_layout(t), and
/// `ke_check_int64(t)`: the same for int64 (indices, offsets). Templates with other
/// dtypes check the dtype and then call ke_check_layout.
std::string AbiHelpers();

/// OpenMP queries for generated sources, which also compile without OpenMP (one
/// thread then): `ke_thread()` (omp_get_thread_num), `ke_threads()`
/// (omp_get_num_threads), `ke_max_threads()` (omp_get_max_threads), all int64_t.
std::string ThreadHelpers();

/// The return codes every generated entry point uses, as comment lines.
std::string ReturnCodesComment();

}  // namespace kernelevolve::operators::templates
