// The only source of randomness in the search: an explicitly seeded Mersenne Twister
// that counts its draws, so its state is two numbers and a checkpoint can restore it.
#pragma once

#include <cstdint>
#include <random>

#include <nlohmann/json.hpp>

namespace kernelevolve::search {

/// std::mt19937_64 seeded with `seed` (never std::random_device), wrapped so that the
/// state is {seed, draws}: Restore re-seeds and discards `draws` outputs (about 5 ns
/// each). Satisfies UniformRandomBitGenerator.
class SeededRng {
 public:
  using result_type = std::mt19937_64::result_type;
  /// A generator at the start of the sequence of `seed`.
  explicit SeededRng(uint64_t seed = 0) : seed_(seed), engine_(seed) {}

  static constexpr result_type min() { return std::mt19937_64::min(); }
  static constexpr result_type max() { return std::mt19937_64::max(); }
  /// The next 64-bit output (counted).
  result_type operator()() {
    ++draws_;
    return engine_();
  }

  /// Uniform integer in [0, n) for n >= 1, by rejection (no modulo bias); the same
  /// sequence on every standard library, unlike std::uniform_int_distribution.
  uint64_t UniformIndex(uint64_t n) {
    if (n <= 1) return 0;
    const uint64_t limit = max() - (max() % n + 1) % n;  // largest multiple of n, minus 1
    while (true) {
      const uint64_t draw = (*this)();
      if (draw <= limit) return draw % n;
    }
  }

  uint64_t seed() const { return seed_; }
  /// Outputs drawn since seeding.
  uint64_t draws() const { return draws_; }

  /// {"seed": S, "draws": N}.
  nlohmann::json Save() const { return {{"seed", seed_}, {"draws", draws_}}; }
  /// Inverse of Save; a null or non-object `state` leaves the generator as it is.
  void Restore(const nlohmann::json& state) {
    if (!state.is_object()) return;
    seed_ = state.value("seed", seed_);
    engine_.seed(seed_);
    draws_ = state.value("draws", uint64_t{0});
    engine_.discard(draws_);
  }

 private:
  uint64_t seed_;
  uint64_t draws_ = 0;
  std::mt19937_64 engine_;
};

}  // namespace kernelevolve::search
