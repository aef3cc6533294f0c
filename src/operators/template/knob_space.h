// A template's tuning knobs: their values, defaults, dependencies and the moves
// between settings that the template operator proposes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kernelevolve::operators::templates {

/// One knob of a template, e.g. "unroll" in {1, 2, 4}.
struct KnobDim {
  std::string name;
  /// Allowed values in exploration order (JSON strings or integers).
  std::vector<nlohmann::json> values;
  /// Value given when a setting omits the knob (must be in `values`).
  nlohmann::json default_value;
  /// Where to move after a failed parent (null: no safer value). E.g. "scalar".
  nlohmann::json safe_value;
  /// Where to move first after a correct parent (null: no preference). E.g. "all".
  nlohmann::json fast_value;
  /// The knob matters only when knob `requires_name` equals `requires_value`
  /// (e.g. "block" only when "threads" == "all"); empty: always.
  std::string requires_name;
  nlohmann::json requires_value;
  /// How a value reads in a rationale; "{}" is replaced by the value, e.g.
  /// "{}-element blocks" -> "16384-element blocks".
  std::string phrase;
};

/// A one-knob change of a setting.
struct KnobMove {
  std::string dim;       // knob name
  nlohmann::json value;  // its new value
  nlohmann::json knobs;  // the whole canonical setting after the move
};

/// The finite space of settings of one template. Settings are JSON objects
/// {knob name: value}; a canonical setting holds exactly the knobs that matter.
class KnobSpace {
 public:
  /// Dims are kept in the given order (it orders enumeration and moves). A dim
  /// may require only a dim listed before it. Throws InternalError on an
  /// inconsistent description (default not among the values, unknown requirement, a
  /// name outside the knob vocabulary of knob_vocabulary.h).
  explicit KnobSpace(std::vector<KnobDim> dims);

  const std::vector<KnobDim>& Dims() const { return dims_; }

  /// Fills defaults, drops knobs that do not matter. Throws InvalidInputError
  /// naming the knob when a knob is unknown or its value is not allowed.
  nlohmann::json Canonical(const nlohmann::json& knobs) const;
  /// True when Canonical() would accept the setting.
  bool IsValid(const nlohmann::json& knobs) const;
  /// Canonical() of `knobs` less the knobs this space lacks or whose value it does not
  /// allow (a curated draft written for several shapes). Never throws for an object.
  nlohmann::json Fit(const nlohmann::json& knobs) const;

  /// Every canonical setting, in lexicographic order of the dims' value lists.
  std::vector<nlohmann::json> Enumerate() const;
  /// Canonical settings one knob away from `knobs` (a canonical setting), in dim
  /// order then value order. Turning a knob on that enables a dependent knob uses
  /// the dependent's default.
  std::vector<KnobMove> Neighbours(const nlohmann::json& knobs) const;
  /// Number of knobs whose values differ between two canonical settings (a knob
  /// present in only one of them counts once).
  int Distance(const nlohmann::json& a, const nlohmann::json& b) const;

  /// "{}" of the dim's phrase filled with the value, e.g. "4x unroll".
  std::string Phrase(const std::string& dim, const nlohmann::json& value) const;
  /// Every knob of a canonical setting as phrases joined by ", ".
  std::string Describe(const nlohmann::json& knobs) const;

  /// The dim by name, or nullptr.
  const KnobDim* Find(const std::string& name) const;

 private:
  bool Relevant(const KnobDim& dim, const nlohmann::json& knobs) const;
  std::vector<KnobDim> dims_;
};

/// Knobs of the "pointwise" template: simd {"off" (std:: math, plain loop),
/// "on" (math prelude, `omp simd` loops)}, threads {"1", "all"} ("1" only
/// when !multithread), block {4096, 16384, 65536} elements per chunk handed to a
/// thread (only with threads "all"), unroll {1, 2, 4} vectors (or elements, scalar)
/// per loop step. `vector_lanes` is the float32 lanes of the machine's widest vector
/// (core::CpuIsa::FloatLanes): at 16 (AVX-512) a knob vector_width {16, 8} floats
/// (`#pragma omp simd simdlen(W)`, only with simd "on") is added; below, the
/// compiler's own choice is the only setting.
/// `explicit_simd_math` (only with vector_lanes >= 16): the graph calls a prelude function
/// that has an explicit AVX-512 variant (ke_log -> ke_log_v16), which adds the knob
/// math {vectorized (the portable prelude), avx512} to the 16-lane settings.
KnobSpace PointwiseKnobSpace(bool multithread, int vector_lanes = 8, bool explicit_simd_math = false);

/// Knobs of the "softmax_lastdim" template: algorithm {"three_pass" (max; sum of exp;
/// normalize), "online" (one sweep keeping a running max and rescaled sum, merged per
/// L1-resident block, Milakov & Gimelshein 2018; normalize), "two_pass_store" (max;
/// exp stored to the output and summed; scale)},
/// math {"libm", "vectorized"} (exp from <cmath> or from the math prelude), threads
/// {"1", "all"} over rows, block_rows {1, 4, 16} (only with threads "all").
KnobSpace SoftmaxKnobSpace(bool multithread);

/// The "threads" knob every CPU family has: {"1", "all"} ("1" alone when `multithread`
/// is false), "1" by default and after a failure, "all" first after a success.
KnobDim ThreadsKnob(bool multithread);

/// The "input_precision" knob of a Triton tl.dot over float32 operands: {"ieee",
/// "tf32x3"}, "ieee" by default and after a failure, "tf32x3" first after a success.
/// "tf32x3" splits each operand x into hi = tf32(x) and lo = tf32(x - hi) and sums
/// hi*hi + hi*lo + lo*hi on tensor cores (the 3xTF32 trick of NVIDIA CUTLASS,
/// github.com/NVIDIA/cutlass/discussions/385; Triton's tl.dot input_precision="tf32x3"),
/// which keeps about 22 of float32's 24 mantissa bits of each operand, where plain TF32
/// keeps 11: its candidates pass the same float32 tolerances as any other. With `tf32`
/// (the reference itself runs some of the products in TF32: core::ReferenceTf32) the
/// values add "tf32", one TF32 product (11 bits), which a printer applies only to the
/// products the reference runs in TF32 (3xTF32 elsewhere); such candidates pass because
/// the GPU runner allows a multiple of eager's own error on its device
/// (worker gpu_checks.EdgeSet / seeds_reference_error, docs/fitness.md).
KnobDim InputPrecisionKnob(bool tf32 = false);

/// A JSON scalar as plain text: strings without quotes, numbers as written.
std::string KnobText(const nlohmann::json& value);

/// The values of `all` up to `cap`, as knob values (at least the first of `all`):
/// e.g. block sizes no larger than the padded row.
std::vector<nlohmann::json> KnobValuesUpTo(const std::vector<int64_t>& all, int64_t cap);

/// The last of the (ascending, integer) `values` not above `want`, else the first.
nlohmann::json NearestKnobValue(const std::vector<nlohmann::json>& values, int64_t want);

}  // namespace kernelevolve::operators::templates
