#include "enable_filters.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace etwrt {
namespace {

EVENT_FILTER_DESCRIPTOR describe(const void* data, ULONG size, ULONG type) {
  EVENT_FILTER_DESCRIPTOR d;
  d.Ptr = reinterpret_cast<ULONGLONG>(data);
  d.Size = size;
  d.Type = type;
  return d;
}

std::vector<std::uint8_t> schematized(std::size_t payload) {
  std::vector<std::uint8_t> bytes(sizeof(EVENT_FILTER_HEADER) + payload, 0x5a);
  EVENT_FILTER_HEADER h{};
  h.Id = 7;
  h.InstanceId = 0x1234;  // Must be cleared: the session sets it.
  h.NextOffset = 99;
  h.Size = static_cast<ULONG>(bytes.size());
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

TEST(CheckFilters, NoneIsFine) {
  const auto c = check_filters(nullptr, 0);
  EXPECT_EQ(c.status, ERROR_SUCCESS);
  EXPECT_FALSE(c.filters.provider_bound);
}

TEST(CheckFilters, CountWithoutArrayIsInvalid) {
  EXPECT_EQ(check_filters(nullptr, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, SchematizedIsProviderBoundWithSessionFieldsCleared) {
  const auto bytes = schematized(8);
  const auto d =
      describe(bytes.data(), static_cast<ULONG>(bytes.size()), EVENT_FILTER_TYPE_SCHEMATIZED);
  const auto c = check_filters(&d, 1);
  ASSERT_EQ(c.status, ERROR_SUCCESS) << c.reason;
  ASSERT_TRUE(c.filters.provider_bound);
  EVENT_FILTER_HEADER h;
  std::memcpy(&h, c.filters.provider_bound->data.data(), sizeof h);
  EXPECT_EQ(h.Id, 7);
  EXPECT_EQ(h.InstanceId, 0u);
  EXPECT_EQ(h.NextOffset, 0u);
}

TEST(CheckFilters, SchematizedSizeMustMatchHeader) {
  auto bytes = schematized(8);
  const auto d =
      describe(bytes.data(), static_cast<ULONG>(bytes.size() - 1), EVENT_FILTER_TYPE_SCHEMATIZED);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
  const auto tiny = describe(bytes.data(), 4, EVENT_FILTER_TYPE_SCHEMATIZED);
  EXPECT_EQ(check_filters(&tiny, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, ProviderDefinedPassesAsIs) {
  const char data[] = "custom";
  const auto d = describe(data, sizeof data, 0x42);
  const auto c = check_filters(&d, 1);
  ASSERT_EQ(c.status, ERROR_SUCCESS);
  EXPECT_EQ(c.filters.provider_bound->type, 0x42u);
  EXPECT_EQ(c.filters.provider_bound->data.size(), sizeof data);
}

TEST(CheckFilters, ProviderDefinedOverLimitIsInvalid) {
  std::vector<std::uint8_t> big(MAX_EVENT_FILTER_DATA_SIZE + 1);
  const auto d = describe(big.data(), static_cast<ULONG>(big.size()), 0x42);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, PidFilterLimits) {
  ULONG pids[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto d = describe(pids, 8 * sizeof(ULONG), EVENT_FILTER_TYPE_PID);
  const auto c = check_filters(&d, 1);
  ASSERT_EQ(c.status, ERROR_SUCCESS);
  EXPECT_FALSE(c.filters.provider_bound);  // System filters never reach the callback.
  EXPECT_EQ(c.filters.system.size(), 1u);
  d.Size = 9 * sizeof(ULONG);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
  d.Size = 6;
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, EventIdFilterLimits) {
  std::vector<std::uint8_t> bytes(4 + 65 * 2, 0);
  auto set_count = [&](USHORT n) { std::memcpy(bytes.data() + 2, &n, 2); };
  set_count(64);
  auto d = describe(bytes.data(), 4 + 64 * 2, EVENT_FILTER_TYPE_EVENT_ID);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_SUCCESS);
  set_count(65);
  d.Size = 4 + 65 * 2;
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
  set_count(0);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
  set_count(10);
  d.Size = 4 + 9 * 2;  // Too small for its Count.
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, PayloadLimit) {
  std::vector<std::uint8_t> bytes(MAX_EVENT_FILTER_PAYLOAD_SIZE + 1);
  auto d = describe(bytes.data(), MAX_EVENT_FILTER_PAYLOAD_SIZE, EVENT_FILTER_TYPE_PAYLOAD);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_SUCCESS);
  d.Size += 1;
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, UnknownSystemTypeAndNullPtrAreInvalid) {
  const char data[] = "x";
  auto d = describe(data, 1, 0x80000003u);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
  d = describe(nullptr, 4, 0x42);
  EXPECT_EQ(check_filters(&d, 1).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, DuplicateTypesAndTooManyAreInvalid) {
  ULONG pid = 1;
  EVENT_FILTER_DESCRIPTOR two[2] = {describe(&pid, 4, EVENT_FILTER_TYPE_PID),
                                    describe(&pid, 4, EVENT_FILTER_TYPE_PID)};
  EXPECT_EQ(check_filters(two, 2).status, ERROR_INVALID_PARAMETER);
  std::vector<EVENT_FILTER_DESCRIPTOR> many(MAX_EVENT_FILTERS_COUNT + 1, describe(&pid, 4, 0x42));
  for (ULONG i = 0; i < many.size(); ++i) many[i].Type = 0x10 + i;
  EXPECT_EQ(check_filters(many.data(), static_cast<ULONG>(many.size())).status,
            ERROR_INVALID_PARAMETER);
}

TEST(CheckFilters, OneProviderBoundFilterPerSession) {
  const auto bytes = schematized(0);
  const char custom[] = "c";
  EVENT_FILTER_DESCRIPTOR both[2] = {
      describe(bytes.data(), static_cast<ULONG>(bytes.size()), EVENT_FILTER_TYPE_SCHEMATIZED),
      describe(custom, sizeof custom, 0x42)};
  EXPECT_EQ(check_filters(both, 2).status, ERROR_INVALID_PARAMETER);
}

}  // namespace
}  // namespace etwrt
