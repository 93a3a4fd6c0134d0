// The shared "did you mean" rule (runtime/core/did_you_mean.h): distances,
// the length-scaled limit, ties, and the message.
#include "runtime/core/did_you_mean.h"

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace opspec {
namespace did_you_mean_test {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("relu", "relu"), 0u);
  EXPECT_EQ(edit_distance("ad", "add"), 1u);
  EXPECT_EQ(edit_distance("expcet", "expect"), 1u);  // a swap
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("hashes", "hash"), 2u);
}

TEST(EditDistanceTest, AnAdjacentSwapIsOneEdit) {
  EXPECT_EQ(edit_distance("rleu", "relu"), 1u);
  EXPECT_EQ(edit_distance("CHCEK", "CHECK"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  // Optimal string alignment: a swapped pair is not edited again.
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

TEST(EditDistanceTest, IsSymmetric) {
  for (auto [a, b] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {"graph_break", "grph_brek"}, {"float32", "float33"}, {"-NXT", "-NEXT"}, {"abcdef", "badcfe"}}) {
    EXPECT_EQ(edit_distance(a, b), edit_distance(b, a)) << a << " vs " << b;
  }
}

TEST(MaxSuggestionEditsTest, ScalesWithTheWordLength) {
  EXPECT_EQ(max_suggestion_edits(""), 0u);
  EXPECT_EQ(max_suggestion_edits("x"), 0u);
  EXPECT_EQ(max_suggestion_edits("ad"), 1u);
  EXPECT_EQ(max_suggestion_edits("dtyp"), 1u);
  EXPECT_EQ(max_suggestion_edits("reson"), 1u);
  EXPECT_EQ(max_suggestion_edits("hashes"), 2u);
  EXPECT_EQ(max_suggestion_edits(std::string(64, 'a')), 2u);
  EXPECT_EQ(max_suggestion_edits(std::string(65, 'a')), 0u);
}

TEST(ClosestMatchTest, FindsTheNearestCandidateWithinTheLimit) {
  const std::vector<std::string> ops = {"add", "mul", "relu", "graph_break", "softmax"};
  EXPECT_EQ(closest_match("ad", ops), "add");
  EXPECT_EQ(closest_match("rleu", ops), "relu");
  EXPECT_EQ(closest_match("grph_brek", ops), "graph_break");
  EXPECT_EQ(closest_match("sofmtax", ops), "softmax");
  EXPECT_EQ(closest_match("rel", ops), "relu");
}

TEST(ClosestMatchTest, SuggestsNothingBeyondTheLimit) {
  const std::array<std::string_view, 3> names = {"dtype", "seed", "t"};
  EXPECT_EQ(closest_match("x", names), "");      // one character: no guess
  EXPECT_EQ(closest_match("dtyp", names), "dtype");
  EXPECT_EQ(closest_match("dtpy", names), "");   // a swap and an insertion: 2 edits, too many for 4 characters
  EXPECT_EQ(closest_match("dy", names), "");
  EXPECT_EQ(closest_match("sed", names), "seed");
  EXPECT_EQ(closest_match("sd", names), "");     // 2 edits: too many for 2 characters
  EXPECT_EQ(closest_match("zzzzzz", names), "");
  EXPECT_EQ(closest_match(std::string(65, 'a'), std::vector<std::string>{std::string(64, 'a')}), "");
  EXPECT_EQ(closest_match("seed", std::vector<std::string>{}), "");
}

TEST(ClosestMatchTest, TheFirstOfEquallyNearCandidatesWins) {
  EXPECT_EQ(closest_match("f33", std::initializer_list<std::string_view>{"f32", "f31", "f64"}), "f32");
  EXPECT_EQ(closest_match("f33", std::initializer_list<std::string_view>{"f31", "f32"}), "f31");
  // A nearer candidate later in the list still wins.
  EXPECT_EQ(closest_match("float33", std::initializer_list<std::string_view>{"float", "float32"}), "float32");
}

TEST(DidYouMeanTest, FormatsTheSuggestionOrNothing) {
  const std::vector<std::string_view> keys = {"suite", "schema"};
  EXPECT_EQ(did_you_mean("suit", keys), "; did you mean 'suite'?");
  EXPECT_EQ(did_you_mean("cases", keys), "");
}

}  // namespace
}  // namespace opspec
