// Constructors of the individual toys (one file each); toy_registry.cpp lists them by name.
#pragma once

#include <memory>

namespace gaugelab::toys {
class Toy;
std::unique_ptr<Toy> make_relu_toy();
std::unique_ptr<Toy> make_factor_scalar_toy();  // toys/factor_scalar.cpp (seed 003 §2)
std::unique_ptr<Toy> make_factor_matrix_toy();  // toys/factor_matrix.cpp (seed 003 §3)
std::unique_ptr<Toy> make_muon_toy();           // toys/muon_toy.cpp (seed 003 §6)
std::unique_ptr<Toy> make_wd_gram_toy();        // toys/wd_gram.cpp (seed 003 §4)
std::unique_ptr<Toy> make_hyperball_toy();      // toys/hyperball_toy.cpp (seed 003 §5)
std::unique_ptr<Toy> make_noise_wd_toy();       // toys/noise_wd.cpp (seed 002)
}  // namespace gaugelab::toys
