#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

namespace {

TEST(EventRegister, RejectsNullArguments) {
  REGHANDLE h = 1;
  EXPECT_EQ(EventRegister(nullptr, nullptr, nullptr, &h), ERROR_INVALID_PARAMETER);
  const GUID g = {1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}};
  EXPECT_EQ(EventRegister(&g, nullptr, nullptr, nullptr), ERROR_INVALID_PARAMETER);
}

}  // namespace
