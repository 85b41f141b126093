// tdh.h on hand-made EVENT_RECORDs: property layout (top level first, struct members after,
// Binary's synthesized length), values by name and array index, and the error codes.
#include "tdh_test_record.h"
#include "tl_test_metadata.h"

#include <windows.h>
#include <evntcons.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using etwrt::testing::as_info;
using etwrt::testing::Bytes;
using etwrt::testing::TdhRecord;
using etwrt::testing::text16;
using etwrt::testing::TlMetadata;

// An EVENT_RECORD whose schema item and user data point into this object.
class Event : public TdhRecord {
 public:
  Event(Bytes meta, Bytes data) : TdhRecord(std::move(data)), meta_(std::move(meta)) {
    item_.ExtType = EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL;
    item_.DataSize = static_cast<USHORT>(meta_.size());
    item_.DataPtr = reinterpret_cast<ULONGLONG>(meta_.data());
    get()->ExtendedDataCount = 1;
    get()->ExtendedData = &item_;
  }

 private:
  Bytes meta_;
  EVENT_HEADER_EXTENDED_DATA_ITEM item_{};
};

TEST(Tdh, LaysOutTopLevelFirstThenStructMembers) {
  Event e(TlMetadata("E")
              .field("a", 7)       // INT32
              .field("pt", 24, 2)  // struct of 2
              .field("x", 6)
              .field("y", 6)
              .field("blob", 14)  // Binary: a.Length then bytes
              .bytes(),
          Bytes{1, 0, 0, 0, 2, 0, 3, 0, 2, 0, 0xAB, 0xCD});
  const Bytes info = e.info();
  const TRACE_EVENT_INFO& t = as_info(info);
  EXPECT_EQ(text16(info, t.EventNameOffset), u"E");
  ASSERT_EQ(t.PropertyCount, 6u);
  ASSERT_EQ(t.TopLevelPropertyCount, 4u);
  const char16_t* names[] = {u"a", u"pt", u"blob.Length", u"blob", u"x", u"y"};
  for (ULONG i = 0; i < 6; ++i) {
    EXPECT_EQ(text16(info, t.EventPropertyInfoArray[i].NameOffset), names[i]) << i;
  }
  const EVENT_PROPERTY_INFO& pt = t.EventPropertyInfoArray[1];
  EXPECT_EQ(pt.Flags & PropertyStruct, PropertyStruct);
  EXPECT_EQ(pt.structType.StructStartIndex, 4);
  EXPECT_EQ(pt.structType.NumOfStructMembers, 2);
  const EVENT_PROPERTY_INFO& blob = t.EventPropertyInfoArray[3];
  EXPECT_EQ(blob.Flags & PropertyParamLength, PropertyParamLength);
  EXPECT_EQ(blob.lengthPropertyIndex, 2);
  EXPECT_EQ(blob.nonStructType.InType, TDH_INTYPE_BINARY);

  EXPECT_EQ(e.property({u"a"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{1, 0, 0, 0}));
  EXPECT_EQ(e.property({u"pt", u"y"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{3, 0}));
  EXPECT_EQ(e.property({u"blob.Length"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{2, 0}));
  EXPECT_EQ(e.property({u"blob"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{0xAB, 0xCD}));
  EXPECT_EQ(e.property({u"x"}).first, static_cast<ULONG>(ERROR_NOT_FOUND));  // a member
  EXPECT_EQ(e.property({u"pt"}).first, static_cast<ULONG>(ERROR_NOT_SUPPORTED));
}

TEST(Tdh, ArraysStringsAndErrors) {
  Event e(TlMetadata("Arr")
              .field("v", 6 | 0x40)  // variable-count UINT16 array
              .field("c", 4 | 0x20)
              .raw({3, 0})    // constant count 3 of UINT8
              .field("w", 1)  // UTF-16 string
              .bytes(),
          Bytes{2, 0, 10, 0, 20, 0, 7, 8, 9, 'h', 0, 'i', 0, 0, 0});
  const Bytes info = e.info();
  const TRACE_EVENT_INFO& t = as_info(info);
  ASSERT_EQ(t.PropertyCount, 4u);  // v.Count, v, c, w
  EXPECT_EQ(t.EventPropertyInfoArray[1].Flags & PropertyParamCount, PropertyParamCount);
  EXPECT_EQ(t.EventPropertyInfoArray[1].countPropertyIndex, 0);
  EXPECT_EQ(t.EventPropertyInfoArray[2].Flags & PropertyParamFixedCount, PropertyParamFixedCount);
  EXPECT_EQ(t.EventPropertyInfoArray[2].count, 3);
  EXPECT_EQ(e.property({u"v"}).second, Bytes({10, 0, 20, 0}));
  EXPECT_EQ(e.property({u"v"}, 1).second, Bytes({20, 0}));
  EXPECT_EQ(e.property({u"v"}, 2).first, static_cast<ULONG>(ERROR_INVALID_PARAMETER));
  EXPECT_EQ(e.property({u"c"}, 2).second, Bytes({9}));
  EXPECT_EQ(e.property({u"w"}).second, Bytes({'h', 0, 'i', 0, 0, 0}));

  PROPERTY_DATA_DESCRIPTOR d{};
  const std::u16string name = u"w";
  d.PropertyName = reinterpret_cast<ULONGLONG>(name.c_str());
  d.ArrayIndex = ~ULONG{0};
  BYTE small[2];
  EXPECT_EQ(TdhGetProperty(e.get(), 0, nullptr, 1, &d, sizeof small, small),
            static_cast<ULONG>(ERROR_INSUFFICIENT_BUFFER));

  Event truncated(TlMetadata("T").field("n", 8).bytes(), Bytes{1, 2});
  EXPECT_EQ(truncated.property({u"n"}).first, static_cast<ULONG>(ERROR_EVT_INVALID_EVENT_DATA));
}

TEST(Tdh, NoSchemaOrABadOne) {
  EVENT_RECORD plain{};
  ULONG size = 0;
  EXPECT_EQ(TdhGetEventInformation(&plain, 0, nullptr, nullptr, &size),
            static_cast<ULONG>(ERROR_NOT_FOUND));
  Event bad(Bytes{9, 0, 0, 'E'}, Bytes{});
  EXPECT_EQ(TdhGetEventInformation(bad.get(), 0, nullptr, nullptr, &size),
            static_cast<ULONG>(ERROR_INVALID_DATA));
  EXPECT_EQ(TdhGetEventInformation(nullptr, 0, nullptr, nullptr, &size),
            static_cast<ULONG>(ERROR_INVALID_PARAMETER));
}

}  // namespace
