// The score the search maximizes: correctness first, then speedup.
#pragma once

#include "core/evaluation.h"
#include "core/timing.h"

namespace kernelevolve::eval {

/// Fills evaluation.speedup_vs_eager (eager drop-in / candidate drop-in, by
/// RobustSpeedupOf: ratio of the fastest calls, robust to a busy machine) and
/// evaluation.fitness: 0 for any failure or an
/// incorrect result, else the speedup's median value (> 0). A correct candidate that
/// was not timed gets fitness 0 too.
void ScoreEvaluation(core::Evaluation& evaluation, const core::TimingStats& eager_baseline);

}  // namespace kernelevolve::eval
