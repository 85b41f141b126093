// The plain LZ77 compressor (xpress_encode.h) against MS-XCA's example and, round trip, against
// the decompressor (xpress.h), which was written from the specification on its own.
#include "etl/xpress.h"
#include "etl/xpress_encode.h"
#include "etl/xpress_reference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace etwrt::etl {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

std::vector<std::byte> compress(const std::vector<std::byte>& in) {
  std::vector<std::byte> out(xpress_lz77_bound(in.size()));
  const std::size_t n = xpress_lz77_compress(in, out);
  EXPECT_NE(n, 0u);
  out.resize(n);
  return out;
}

void expect_round_trip(const std::vector<std::byte>& in, const std::string& what) {
  const std::vector<std::byte> packed = compress(in);
  std::vector<std::byte> back(in.size());
  ASSERT_EQ(xpress_lz77_decompress(packed, back), static_cast<std::ptrdiff_t>(in.size())) << what;
  EXPECT_TRUE(back == in) << what;
  std::vector<std::byte> slow(in.size());  // MS-XCA's loop as written agrees
  ASSERT_EQ(testing::reference_lz77(packed, slow), static_cast<std::ptrdiff_t>(in.size())) << what;
  EXPECT_TRUE(slow == in) << what;
}

// MS-XCA's plain LZ77 example: "abc" 100 times is three literals and one match of 297 bytes at
// offset 3 (its length in the 3 bits, the half-byte, a byte of 255 and 16 bits).
TEST(XpressEncode, TheSpecificationsExample) {
  std::string abc;
  for (int i = 0; i < 100; ++i) abc += "abc";
  const std::vector<std::byte> packed = compress(bytes_of(abc));
  const std::vector<std::uint8_t> expected = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63,
                                              0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
  ASSERT_EQ(packed.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(std::to_integer<std::uint8_t>(packed[i]), expected[i]) << "byte " << i;
}

TEST(XpressEncode, EveryLengthFormRoundTrips) {
  for (const std::size_t n : {0, 1, 2, 3, 4, 31, 32, 33, 64, 100}) {
    expect_round_trip(std::vector<std::byte>(n, std::byte{'x'}), "run of " + std::to_string(n));
  }
  // Match lengths at each boundary of the encoding: 3 bits, half-byte, byte, 16 and 32 bits.
  for (const std::size_t len : {9, 10, 24, 25, 26, 279, 280, 281, 65537, 65538, 200000}) {
    std::vector<std::byte> in = bytes_of("0123456789");
    in.resize(10 + len, std::byte{'z'});
    in.push_back(std::byte{'!'});
    expect_round_trip(in, "match of " + std::to_string(len));
  }
}

TEST(XpressEncode, RandomAndStructuredDataRoundTrip) {
  std::mt19937 rng(7);
  std::vector<std::byte> noise(100000);
  for (auto& b : noise) b = static_cast<std::byte>(rng());
  expect_round_trip(noise, "noise");
  // Trace records: a header repeated with a counter and a stamp that change, far apart matches.
  std::vector<std::byte> records;
  for (std::uint64_t k = 0; k < 5000; ++k) {
    std::byte r[112] = {};
    std::memcpy(r, "\x70\x00\x13\xc0", 4);
    const std::uint64_t stamp = 1'000'000 + k * 37;
    std::memcpy(r + 16, &stamp, 8);
    std::memcpy(r + 80, &k, 8);
    records.insert(records.end(), r, r + sizeof r);
    if (k % 97 == 0) records.insert(records.end(), noise.begin(), noise.begin() + 9000);
  }
  expect_round_trip(records, "records and noise");
  std::vector<std::byte> plain(records.begin() + 9000 + 112, records.begin() + 9000 + 112 * 97);
  expect_round_trip(plain, "records");
  EXPECT_LT(compress(plain).size(), plain.size() / 4) << "records share most of their bytes";
}

// Inputs of a few symbols: matches of every length and offset, overlapping their own output,
// short literal runs between them, at every size near a flag group's.
TEST(XpressEncode, SmallAlphabetsRoundTrip) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::byte> in(rng() % 3000);
    const unsigned symbols = 1 + rng() % 4;
    for (auto& b : in) b = static_cast<std::byte>(rng() % symbols);
    for (std::size_t k = 0; k + 64 < in.size(); k += 1 + rng() % 500) {
      in[k] = static_cast<std::byte>(rng());  // a literal among the matches
    }
    expect_round_trip(in, "round " + std::to_string(round));
  }
}

// xpress_lz77_bound is enough however the literals and matches fall: all literals, then one
// short match at the very end (each item's room is checked as what it takes, not the most a
// match may take).
TEST(XpressEncode, TheBoundIsEnoughForAnyMix) {
  std::mt19937 rng(3);
  for (const std::size_t n : {29, 30, 31, 32, 33, 34, 35, 36, 61, 62, 63, 64, 65, 66, 67, 1000}) {
    std::vector<std::byte> in(n);
    for (auto& b : in) b = static_cast<std::byte>(rng());
    std::memcpy(in.data() + n - 4, in.data(), 4);  // the last 4 bytes: a match
    expect_round_trip(in, "literals then a match, " + std::to_string(n));
  }
}

// One encoder for many buffers (a logger's): each output as a fresh encoder's, whatever came
// before (positions from earlier calls are never matched).
TEST(XpressEncode, AnEncoderReusedGivesTheSameBytes) {
  std::mt19937 rng(5);
  XpressEncoder reused;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::byte> in(1 + rng() % 20000);
    for (auto& b : in) b = static_cast<std::byte>(rng() % 3);
    std::vector<std::byte> out(xpress_lz77_bound(in.size()));
    const std::size_t n = reused.compress(in, out);
    out.resize(n);
    ASSERT_NE(n, 0u);
    EXPECT_TRUE(out == compress(in)) << "round " << round;
  }
}

TEST(XpressEncode, TooSmallAnOutputIsRefused) {
  std::vector<std::byte> in(1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>(i * 131);
  std::vector<std::byte> out(100);
  EXPECT_EQ(xpress_lz77_compress(in, out), 0u);
  EXPECT_EQ(xpress_lz77_compress(in, std::span<std::byte>(out.data(), 3)), 0u);
}

}  // namespace
}  // namespace etwrt::etl
