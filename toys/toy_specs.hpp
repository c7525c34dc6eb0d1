// Constructors of the individual toys (one file each); toy_registry.cpp lists them by name.
#pragma once

#include <memory>

namespace gaugelab::toys {
class Toy;
std::unique_ptr<Toy> make_relu_toy();
}  // namespace gaugelab::toys
