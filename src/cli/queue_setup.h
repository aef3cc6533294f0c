// `optimize --queue`, `bench --queue`, `compare --queue` (issue 22): the search's
// candidates are evaluated by `kernelevolve worker`s through Redis (docs/scale.md).
#pragma once

#include <memory>

#include "cli/optimize_command.h"
#include "core/problem.h"
#include "exec/queue_evaluator.h"
#include "platforms/platform.h"

namespace kernelevolve::cli {

/// Before any work: --queue parses as redis://HOST:PORT[/DB], answers PING, and the
/// fixtures are files (RefuseDeviceFixtures). Nothing to check without --queue. Throws
/// core::InvalidInputError (exit 2, one line).
void ValidateQueueFlags(const OptimizeOptions& o);

/// Queue jobs carry fixture files: throws core::InvalidInputError (one line naming
/// `who`) when KE_FIXTURES (FixturesModeFromEnv) asks for device fixtures or holds a
/// value the problem worker would refuse.
void RefuseDeviceFixtures(const std::string& who);

/// With --queue: publishes the problem file and its fixtures by content hash and
/// returns the evaluator the search uses instead of the local one; nullptr without
/// --queue. Workers time eager PyTorch as o's baseline flags say.
std::unique_ptr<exec::QueueEvaluator> MakeQueueEvaluator(const OptimizeOptions& o, const core::Problem& problem,
                                                         const platforms::RunOptions& run_options);

/// Workers serving `target` jobs on `queue` now: the connections named
/// exec::WorkerConnectionName(target, ...) in CLIENT LIST (each worker names its own).
/// Throws core::InvalidInputError when Redis cannot be reached, core::IoError when it fails.
int LiveQueueWorkers(const std::string& queue, const std::string& target);

}  // namespace kernelevolve::cli
