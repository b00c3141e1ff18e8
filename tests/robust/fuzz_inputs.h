#pragma once
// Inputs for the over-the-socket fuzz of the robustness suite: random bytes, and valid
// requests (multibulk and inline) mutated the ways a broken client or a hostile one would:
// flipped and inserted bytes, cut or repeated ranges, header numbers replaced by huge,
// negative or junk ones. No input can ask for SHUTDOWN, CONFIG SET or DEBUG except by an
// astronomically unlikely mutation (the corpus has none of them).
#include <random>
#include <string>

namespace latch::test {

std::string NextFuzzInput(std::mt19937_64& rng);

}  // namespace latch::test
