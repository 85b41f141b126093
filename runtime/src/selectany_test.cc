// __declspec(selectany) with MSVC's meaning: an object declared in a header that two
// translation units include is defined once, at a real address (a weak declaration would
// leave it at 0), zero-filled without an initializer, aligned as DECLSPEC_CACHEALIGN says.
#include "selectany_shape.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

TEST(Selectany, OneDefinitionAcrossTranslationUnitsAtANonNullAddress) {
  ULONG* volatile bits = SelectanyEnableBits;  // volatile: the compiler may not assume non-null
  ASSERT_NE(bits, nullptr);
  EXPECT_EQ(bits, other_unit_enable_bits());
  EXPECT_EQ(bits[0], 0u);
  bits[0] = 5;
  EXPECT_EQ(other_unit_enable_bits()[0], 5u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bits) % SYSTEM_CACHE_ALIGNMENT_SIZE, 0u);

  EXPECT_EQ(SelectanyKeywords, other_unit_keywords());
  EXPECT_EQ(SelectanyKeywords[1], 0x8000000000000000u);
  EXPECT_EQ(SelectanyNamespace, other_unit_namespace());
  EXPECT_EQ(ARRAYSIZE(SelectanyNamespace), 2u);
}

TEST(Win32Base, HresultFamily) {
  EXPECT_EQ(HRESULT_FROM_WIN32(ERROR_SUCCESS), S_OK);
  EXPECT_EQ(HRESULT_FROM_WIN32(ERROR_INVALID_PARAMETER), E_INVALIDARG);
  EXPECT_EQ(HRESULT_FROM_WIN32(ERROR_OUTOFMEMORY), E_OUTOFMEMORY);
  EXPECT_TRUE(FAILED(E_INVALIDARG));
  EXPECT_TRUE(SUCCEEDED(S_FALSE));
  EXPECT_EQ(HRESULT_FACILITY(E_INVALIDARG), FACILITY_WIN32);
  EXPECT_EQ(sizeof(WCHAR), 2u);
  EXPECT_EQ(sizeof(TEXT("ab")), 3u);  // No UNICODE here: TEXT is narrow.
}

}  // namespace
