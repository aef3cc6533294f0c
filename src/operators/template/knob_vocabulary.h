// The one vocabulary of knob names that every template family draws from, on every
// target (CPU C++, Triton, CUDA C++): a knob that means the same thing is spelled the
// same everywhere (docs/templates.md, "Knob vocabulary", lists the same table).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelevolve::operators::templates {

/// One word of the vocabulary.
struct KnobWord {
  std::string_view name;
  /// What the knob sets and in which unit, as docs/templates.md states it.
  std::string_view meaning;
  /// True for the schedule knobs shared by families (tile sizes, threads, warps,
  /// stages, vector width, accumulator, math); false for a family's own
  /// algorithm-shaped choice (a main loop's form, a gather width, a radix digit).
  bool schedule;
};

/// Every knob name a KnobSpace may hold, schedule knobs first, in table order.
const std::vector<KnobWord>& KnobVocabulary();

/// The word named `name`, or nullptr when the vocabulary lacks it.
const KnobWord* FindKnobWord(std::string_view name);

}  // namespace kernelevolve::operators::templates
