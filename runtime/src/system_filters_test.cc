#include "system_filters.h"

#include "wire.h"

#include <windows.h>
#include <evntprov.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

using nlohmann::json;

json entry(ULONG type, const std::vector<std::uint8_t>& data) {
  return json::array({type, etwrt::bytes_to_hex(data.data(), data.size())});
}

std::vector<std::uint8_t> id_filter(bool filter_in, std::vector<USHORT> ids) {
  std::vector<std::uint8_t> out(4 + ids.size() * 2);
  out[0] = filter_in ? 1 : 0;
  const auto count = static_cast<USHORT>(ids.size());
  std::memcpy(out.data() + 2, &count, 2);
  std::memcpy(out.data() + 4, ids.data(), ids.size() * 2);
  return out;
}

std::vector<std::uint8_t> pids(std::vector<ULONG> list) {
  std::vector<std::uint8_t> out(list.size() * 4);
  std::memcpy(out.data(), list.data(), out.size());
  return out;
}

TEST(SystemFilters, NothingToApply) {
  EXPECT_EQ(etwrt::parse_system_filters(json::array(), 7), nullptr);
  EXPECT_EQ(etwrt::parse_system_filters(json(nullptr), 7), nullptr);
  // Types the event path does not apply are ignored.
  EXPECT_EQ(etwrt::parse_system_filters(json::array({entry(EVENT_FILTER_TYPE_PAYLOAD, {1, 2})}), 7),
            nullptr);
}

TEST(SystemFilters, EventIdFilterInKeepsOnlyListed) {
  auto f = etwrt::parse_system_filters(
      json::array({entry(EVENT_FILTER_TYPE_EVENT_ID, id_filter(true, {9, 3}))}), 7);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->process_excluded);
  EXPECT_TRUE(f->accepts_id(3));
  EXPECT_TRUE(f->accepts_id(9));
  EXPECT_FALSE(f->accepts_id(4));
}

TEST(SystemFilters, EventIdFilterOutDropsListed) {
  auto f = etwrt::parse_system_filters(
      json::array({entry(EVENT_FILTER_TYPE_EVENT_ID, id_filter(false, {3}))}), 7);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->accepts_id(3));
  EXPECT_TRUE(f->accepts_id(4));
}

TEST(SystemFilters, PidListExcludesOtherProcesses) {
  auto listed =
      etwrt::parse_system_filters(json::array({entry(EVENT_FILTER_TYPE_PID, pids({5, 7}))}), 7);
  ASSERT_NE(listed, nullptr);
  EXPECT_FALSE(listed->process_excluded);
  EXPECT_TRUE(listed->accepts_id(1));
  auto other =
      etwrt::parse_system_filters(json::array({entry(EVENT_FILTER_TYPE_PID, pids({5, 6}))}), 7);
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(other->process_excluded);
}

TEST(SystemFilters, TruncatedIdListIgnored) {
  std::vector<std::uint8_t> bad = id_filter(true, {1, 2});
  bad.resize(bad.size() - 1);
  EXPECT_EQ(etwrt::parse_system_filters(json::array({entry(EVENT_FILTER_TYPE_EVENT_ID, bad)}), 7),
            nullptr);
}

}  // namespace
