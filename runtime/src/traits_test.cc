#include "traits.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace etwrt {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put_u16(Bytes& b, std::size_t at, std::size_t v) {
  b[at] = static_cast<std::uint8_t>(v & 0xff);
  b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

// name + traits, with TraitsSize patched to the true total.
Bytes blob(const std::string& name, const std::vector<Bytes>& traits) {
  Bytes b;
  b.reserve(256);
  b.push_back(0);
  b.push_back(0);
  for (char c : name) b.push_back(static_cast<std::uint8_t>(c));
  b.push_back(0);
  for (const Bytes& t : traits) {
    for (std::uint8_t byte : t) b.push_back(byte);
  }
  put_u16(b, 0, b.size());
  return b;
}

Bytes trait(std::uint8_t type, const Bytes& data) {
  Bytes t;
  t.reserve(64);
  t.push_back(0);
  t.push_back(0);
  t.push_back(type);
  for (std::uint8_t byte : data) t.push_back(byte);
  put_u16(t, 0, t.size());
  return t;
}

TEST(ParseTraits, NameOnly) {
  const Bytes b = blob("MyProvider", {});
  const auto r = parse_traits(b.data(), b.size());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.traits.name, "MyProvider");
  EXPECT_TRUE(r.traits.traits.empty());
  EXPECT_FALSE(r.traits.group);
}

TEST(ParseTraits, EmptyNameIsWellFormed) {
  const Bytes b = blob("", {});
  EXPECT_EQ(b.size(), 3u);
  EXPECT_TRUE(parse_traits(b.data(), b.size()).ok);
}

TEST(ParseTraits, GroupTraitGivesTheGroupGuid) {
  const GUID g = {0x12345678, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};
  Bytes data(sizeof g);
  std::memcpy(data.data(), &g, sizeof g);
  const Bytes b = blob("P", {trait(EtwProviderTraitTypeGroup, data), trait(200, {9, 9})});
  const auto r = parse_traits(b.data(), b.size());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_TRUE(r.traits.group);
  EXPECT_TRUE(*r.traits.group == g);
  ASSERT_EQ(r.traits.traits.size(), 2u);
  EXPECT_EQ(r.traits.traits[1].type, 200);
  EXPECT_EQ(r.traits.traits[1].data, (Bytes{9, 9}));
}

TEST(ParseTraits, TraitWithNoDataIsThreeBytes) {
  const Bytes b = blob("P", {trait(130, {})});
  const auto r = parse_traits(b.data(), b.size());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.traits.traits[0].data.empty());
}

TEST(ParseTraits, GroupTraitOfWrongSizeIsNoGroup) {
  const Bytes b = blob("P", {trait(EtwProviderTraitTypeGroup, {1, 2, 3})});
  const auto r = parse_traits(b.data(), b.size());
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.traits.group);
}

TEST(ParseTraits, RejectsNull) { EXPECT_FALSE(parse_traits(nullptr, 10).ok); }

TEST(ParseTraits, RejectsTooShort) {
  const Bytes b = {2, 0};
  EXPECT_FALSE(parse_traits(b.data(), b.size()).ok);
}

TEST(ParseTraits, RejectsTotalLargerThanBuffer) {
  Bytes b = blob("P", {});
  put_u16(b, 0, b.size() + 1);
  const auto r = parse_traits(b.data(), b.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("TraitsSize"), std::string::npos);
}

TEST(ParseTraits, RejectsTotalSmallerThanBuffer) {
  Bytes b = blob("P", {});
  b.push_back(0);  // One byte the header does not account for.
  EXPECT_FALSE(parse_traits(b.data(), b.size()).ok);
}

TEST(ParseTraits, RejectsMissingNul) {
  Bytes b = {0, 0, 'A', 'B', 'C'};
  put_u16(b, 0, b.size());
  const auto r = parse_traits(b.data(), b.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("NUL"), std::string::npos);
}

TEST(ParseTraits, RejectsTraitOverrun) {
  Bytes t = trait(130, {1, 2});
  put_u16(t, 0, t.size() + 4);
  const Bytes b = blob("P", {t});
  const auto r = parse_traits(b.data(), b.size());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("overruns"), std::string::npos);
}

TEST(ParseTraits, RejectsTraitSizeBelowThree) {
  for (std::size_t size : {0u, 1u, 2u}) {
    Bytes t = trait(130, {});
    put_u16(t, 0, size);
    const Bytes b = blob("P", {t});
    EXPECT_FALSE(parse_traits(b.data(), b.size()).ok) << "TraitSize " << size;
  }
}

TEST(ParseTraits, RejectsTruncatedTraitHeader) {
  Bytes b = blob("P", {});
  b.push_back(5);  // Half a TraitSize.
  put_u16(b, 0, b.size());
  EXPECT_FALSE(parse_traits(b.data(), b.size()).ok);
}

TEST(ParseTraits, RejectsSecondTraitOverrunAfterAGoodOne) {
  Bytes bad = trait(131, {7});
  put_u16(bad, 0, 10);
  const Bytes b = blob("P", {trait(130, {1}), bad});
  EXPECT_FALSE(parse_traits(b.data(), b.size()).ok);
}

}  // namespace
}  // namespace etwrt
