// readme_example_test.cc: the examples users copy, compiled and run as they
// are written: the one in opspec_gtest.h's header comment (with only that
// header included and `using namespace opspec;`, as it shows) and the lines
// of the README's "Testing with opspec" block, each with the inputs it
// needs. If one of these stops compiling or passing, the docs are wrong.
// (The block's EXPECT_OPCHECK line runs in examples/downstream/tests/acme_test.cc,
// where acme::scaled_add is defined.)
#include "harness/gtest/opspec_gtest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/compile/controls.h"
#include "runtime/trace/make_fx.h"

// ---- opspec_gtest.h's example, verbatim ----
using ::testing::ElementsAre;
using namespace opspec;

TEST(MyOp, Decomposes) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::mm"));
  EXPECT_OPS({ auto h = ops::relu(x); ops::add(h, h); },
             OpsInOrder("relu", Op("add").WithShapes({{4, 4}, {4, 4}})));
  EXPECT_EAGER_COMPILED_EQUIVALENT([](const Tensor& a) { return ops::relu(a); }, {x},
                                   {.backend = "fused"});
}

// ---- the README's block, line by line ----
namespace readme_example_test {

using ::testing::HasSubstr;

TEST(ReadmeTestingBlock, OpSequences) {
  const Tensor x = ops::randn({8, 16}), w = ops::randn({4, 16}), b = ops::randn({4});
  EXPECT_OPS({ auto h = ops::relu(x); ops::mm(h, ops::t(x)); },
             ElementsAre(Op("aten::relu"), Op("aten::t"), Op("aten::mm")));
  EXPECT_OPS(ops::linear(x, w, b), OpsInOrder("aten::t", Op("aten::addmm").WithShapes({{4}, {8, 16}, {16, 4}})));
  EXPECT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre(Op("aten::linear")));
}

TEST(ReadmeTestingBlock, CompiledRuns) {
  const Tensor x = ops::randn({8}), y = ops::randn({8});
  {
    auto f = [](const Tensor& a, const Tensor& b) { return ops::relu(ops::add(a, b)); };
    EXPECT_EAGER_COMPILED_EQUIVALENT(f, {x, y}, {.backend = "fused"});
  }
  {
    disallow_in_graph("aten::neg");
    auto f = [](const Tensor& a) { return ops::relu(ops::neg(ops::sin(a))); };
    EXPECT_GRAPH_BREAKS(f, {x}, 1, HasSubstr("disallow"));
    allow_op_in_graph("aten::neg");
  }
}

TEST(ReadmeTestingBlock, TextAndTensors) {
  const Tensor x = ops::ones({2, 2});
  EXPECT_DEBUG_STRING(ops::relu(x), R"(    aten::relu(t: f32[2, 2])  ->  t: f32[2, 2])");  // OPSPEC_ACCEPT=1 rewrites it
  const Graph graph = make_fx([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::mm(in[0], in[0])}; })(x);
  EXPECT_FILECHECK(graph.str(), "CHECK: aten::mm\nCHECK-NOT: aten::clone");
  const Tensor y = ops::mul(x, 3.0), ref = ops::full({2, 2}, 3.0);
  EXPECT_TENSOR_CLOSE(y, ref);                               // torch.testing's per-dtype tolerances
  EXPECT_TENSOR_EQ(ops::add(x, 0.0), x);                     // or .rtol = r, .atol = a for CLOSE
  EXPECT_STRIDES(ops::relu(ops::t(x)), {1, 2});              // Tensor.stride() exactly: relu keeps t(x)'s layout
  auto t = opspec::testing::make_tensor({2, 3}, DType::kFloat32, kCPU, {.low = 0, .high = 1, .noncontiguous = true});
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(ops::all(ops::logical_and(ops::ge(t, 0.0), ops::lt(t, 1.0))).item().to_bool());
}

// ---- the copies above are the docs' text ----

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// squeeze: the line without leading, trailing or repeated spaces.
std::string squeeze(std::string_view line) {
  std::string out;
  for (char c : line) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// code_lines: the lines of the first ```cpp block after heading in markdown.
std::vector<std::string> code_lines(const std::string& markdown, std::string_view heading) {
  std::vector<std::string> out;
  size_t at = markdown.find(heading);
  if (at == std::string::npos || (at = markdown.find("```cpp\n", at)) == std::string::npos) return out;
  std::istringstream in(markdown.substr(at + 7, markdown.find("\n```", at + 7) - at - 7));
  for (std::string line; std::getline(in, line);) out.push_back(squeeze(line));
  return out;
}

TEST(ReadmeTestingBlock, TheCopiesAreTheDocsText) {
  const std::filesystem::path here(__FILE__), root = here.parent_path().parent_path().parent_path();
  const auto squeezed = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out += squeeze(line) + "\n";
    return out;
  };
  const std::string source = squeezed(read_file(here));
  const std::string acme = squeezed(read_file(root / "examples/downstream/tests/acme_test.cc"));
  const std::vector<std::string> readme = code_lines(read_file(root / "README.md"), "## Testing with opspec");
  ASSERT_GE(readme.size(), 10u) << "the README's block was not found";
  for (const std::string& line : readme) {
    if (line.find("acme::scaled_add") != std::string::npos) {  // its code, without the README's comment
      const std::string code = line.substr(0, line.find("; //") + 1);
      EXPECT_NE(acme.find(code), std::string::npos) << "README line not run as written in acme_test.cc: " << code;
      continue;
    }
    EXPECT_NE(source.find(line), std::string::npos) << "README line not run as written: " << line;
  }
  // The header's example: its `//   ` lines after "Example".
  const std::string header = read_file(root / "harness/gtest/opspec_gtest.h");
  std::istringstream in(header.substr(header.find("// Example")));
  int lines = 0;
  for (std::string line; std::getline(in, line) && line.starts_with("//");) {
    if (!line.starts_with("//   ")) continue;
    ++lines;
    EXPECT_NE(source.find(squeeze(line.substr(2))), std::string::npos) << "header example line not run: " << line;
  }
  EXPECT_GE(lines, 8);
}

}  // namespace readme_example_test
