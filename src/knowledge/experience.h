// Experiences: what worked on one problem, distilled from a finished run so that later
// runs on matching problems can start from it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "search/node.h"

namespace kernelevolve::knowledge {

/// Rank and log2-bucketed sizes of each ABI input tensor: a size d falls in bucket
/// floor(log2(d)) (d <= 1 in bucket 0), so 32 x 512 is r2[5,9] and 48 x 700 is r2[5,9] too.
struct ShapeClass {
  std::vector<std::vector<int>> buckets;  // one list per tensor, one bucket per dimension
  /// "r2[5,9]", tensors joined by ";" ("r0[]" for a scalar, "none" without tensors).
  std::string Text() const;
};

/// The shape class of `shapes` (one shape per tensor).
ShapeClass ShapeClassOf(const std::vector<std::vector<int64_t>>& shapes);
/// Distance between two shape classes: the sum over dimensions of the bucket difference
/// (each unit is a factor of two in one dimension), or -1 when they are not comparable
/// (different tensor counts or ranks).
int ShapeDistance(const ShapeClass& a, const ShapeClass& b);

/// The shapes of the problem's ABI inputs, in ABI order.
std::vector<std::vector<int64_t>> InputShapes(const core::Problem& problem);

/// The operator family: the template name, qualified by the graph's call targets for
/// templates that cover many ops ("softmax_lastdim", "pointwise:aten.gelu.default",
/// "pointwise:aten.mul.Tensor+aten.sigmoid.default"); "graph:<targets>" without a
/// template, "problem:<name>" when no graph was captured.
std::string OperatorFamily(const core::Problem& problem, const std::string& template_name);

/// What the problem computes, independent of sizes: the sorted call targets of the
/// captured graph with their constant scalar arguments, then input and output dtypes,
/// e.g. "aten._softmax.default(dim=-1,half_to_float=false)|float32->float32".
/// Without a graph: "problem:<name>|<dtypes>".
std::string OpSignature(const core::Problem& problem);

/// One distilled record (table `experiences` of the knowledge database).
struct Experience {
  int64_t id = -1;  // assigned when recorded
  double created_unix_s = 0;
  std::string problem;        // problem name
  std::string problem_path;
  std::string platform;       // "cpu"
  std::string machine;        // CPU model (or GPU name) it was measured on
  /// Instruction set its kernel was compiled for and timed on (core::CpuIsa::level,
  /// e.g. "x86-64-v4"); "" in records made before schema version 2.
  std::string isa;
  std::string operator_family;
  std::string op_signature;
  std::string shape_class;    // ShapeClass::Text()
  std::vector<std::vector<int64_t>> shapes;  // the input shapes themselves
  // The transformation: how the best kernel was made, and what along its lineage helped.
  std::string operator_name;  // "template", "llm:<model>"
  std::string template_name;
  nlohmann::json knobs = nlohmann::json::object();
  /// Parent -> child steps on the best node's lineage that raised fitness, root-most
  /// first: [{"changes": {"knob": [old, new], ...}, "fitness_before": x, "fitness_after": y}].
  nlohmann::json improvements = nlohmann::json::array();
  std::string rationale;      // the best candidate's rationale
  // The measured outcome.
  double fitness = 0;         // search fitness of the best node (speedup vs eager)
  double speedup = 0;         // confirmed speedup when measured, else the search speedup
  bool speedup_confirmed = false;
  double latency_us = 0;      // best node's drop-in median
  double eager_us = 0;        // eager baseline median
  int evaluations = 0;        // evaluations in the run
  int evaluations_to_best = 0;  // 1-based position of the best node in evaluation order
  std::string source;         // the kernel
  std::string source_hash;    // core::ContentHash(source)
  std::string run_dir;        // where the run wrote its files

  /// One line for an operator's context, e.g. "softmax_lastdim on cpu (AMD EPYC, x86-64-v3), shapes
  /// r2[5,9]: 1.92x vs eager with {...}; gains: math libm->vectorized (0.9x->1.5x); best
  /// at evaluation 4 of 8 [experience 3, problem softmax]".
  std::string Summary() const;
  /// Where it was measured, for a line a person reads: "AMD EPYC 7B13, x86-64-v3", the
  /// model alone without an ISA, "unknown machine" without a model.
  std::string MachineText() const;
};

/// What a finished run contributes besides the problem and its nodes.
struct DistillContext {
  std::string platform = "cpu";
  std::string machine;
  std::string run_dir;
  double confirmed_speedup = 0;  // > 0: the final interleaved measurement of the best node
  std::string isa;               // core::CpuIsa::level of the machine
};

/// Distills a run: `nodes` in evaluation order (ids ascending). The best node is the
/// correct one with the highest fitness (ties: the earlier). nullopt when no node is
/// correct with fitness > 0.
std::optional<Experience> DistillExperience(const core::Problem& problem,
                                            const std::vector<search::Node>& nodes,
                                            const DistillContext& context);

/// What a new problem is matched on.
struct ExperienceKey {
  std::string platform;
  std::string op_signature;
  std::vector<std::vector<int64_t>> shapes;
  std::string machine;
  std::string isa;  // core::CpuIsa::level of the machine
};

/// The key of a problem about to be optimized on `machine` (CPU model or GPU name) with
/// instruction set `isa` (core::CpuIsa::level).
ExperienceKey ExperienceKeyFor(const core::Problem& problem, const std::string& platform,
                               const std::string& machine, const std::string& isa = "");

/// A prior record that matches a key, and why.
struct ExperienceMatch {
  Experience experience;
  int shape_distance = 0;
  /// Same CPU model (or GPU) and same instruction set: a record without an ISA, or
  /// with another, is another machine, whose kernel is only a seed to re-measure.
  bool same_machine = false;
  std::string why;  // "same op signature and platform; shape r2[5,9] vs r2[5,9] (distance 0); same machine"
};

/// The records with the key's op signature and platform whose shape class is within
/// `max_shape_distance`, best first: nearest shape, then same machine, then highest
/// fitness, then newest.
std::vector<ExperienceMatch> MatchExperiences(const ExperienceKey& key,
                                              const std::vector<Experience>& records,
                                              int max_shape_distance);

}  // namespace kernelevolve::knowledge
