#include "harness/model/named_values.h"

#include <gtest/gtest.h>

namespace etwh {
namespace {

enum class Fruit { kApple, kPear, kPlum };

constexpr NamedValue<Fruit> kFruits[] = {
    {"apple", Fruit::kApple}, {"pear", Fruit::kPear}, {"plum", Fruit::kPlum}};

TEST(NamedValues, ANameGivesItsValueAndAnyOtherNone) {
  EXPECT_EQ(value_named("pear", kFruits), Fruit::kPear);
  EXPECT_EQ(value_named("plum", kFruits), Fruit::kPlum);
  EXPECT_EQ(value_named("Pear", kFruits), std::nullopt);
  EXPECT_EQ(value_named("", kFruits), std::nullopt);
}

TEST(NamedValues, TheNamesAreListedForAMessage) {
  EXPECT_EQ(names_listed(kFruits), "apple, pear or plum");
  constexpr NamedValue<Fruit> two[] = {{"apple", Fruit::kApple}, {"pear", Fruit::kPear}};
  EXPECT_EQ(names_listed(two), "apple or pear");
  constexpr NamedValue<Fruit> one[] = {{"plum", Fruit::kPlum}};
  EXPECT_EQ(names_listed(one), "plum");
}

}  // namespace
}  // namespace etwh
