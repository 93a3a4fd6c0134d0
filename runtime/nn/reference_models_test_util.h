// reference_models_test_util.h: the small models of PyTorch's DebugMode documentation
// (Foo and Bar), used by tests and fixtures that reproduce its examples.
#pragma once

#include <memory>

#include "runtime/nn/layers.h"

namespace opspec::nn {

// Foo: two 4x4 Linear layers in sequence (children l1, l2).
struct Foo : Module {
  std::shared_ptr<Linear> l1, l2;
  Foo() : Module("Foo") {
    l1 = register_module("l1", std::make_shared<Linear>(4, 4));
    l2 = register_module("l2", std::make_shared<Linear>(4, 4));
  }
  Tensor forward(const Tensor& x) override { return (*l2)((*l1)(x)); }
};

// Bar: a Foo (abc) then a 4x4 Linear (xyz); its module tree is Bar, Bar.abc,
// Bar.abc.l1, Bar.abc.l2, Bar.xyz.
struct Bar : Module {
  std::shared_ptr<Foo> abc;
  std::shared_ptr<Linear> xyz;
  Bar() : Module("Bar") {
    abc = register_module("abc", std::make_shared<Foo>());
    xyz = register_module("xyz", std::make_shared<Linear>(4, 4));
  }
  Tensor forward(const Tensor& x) override { return (*xyz)((*abc)(x)); }
};

}  // namespace opspec::nn
