// fuzz_binary_seeds CORPUS_DIR: writes the seeds that only our own encoders make right, so that
// the fuzzer starts from well-formed input: session buffer records (encode_record: bare, with a
// related activity ID, with provider traits, with every item, several in a row) into
// dataplane_records/, and traits blobs (build_traits_blob: a name alone, a group, custom traits)
// into traits/. fuzz/make_corpus runs it after copying the shipped text files.
#include "win32_ops.h"

#include <etwrt/dataplane.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace {

namespace dp = etwrt::dataplane;

void write_file(const std::filesystem::path& file, const void* data, std::size_t size) {
  std::ofstream out(file, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error(file.string() + ": cannot write the file");
}

// One buffer holding the records of `inputs`, back to back, as a writer leaves them.
std::vector<std::byte> buffer_of(const std::vector<dp::EventInput>& inputs) {
  std::vector<std::byte> buffer;
  std::uint64_t timestamp = 1000;
  for (const dp::EventInput& in : inputs) {
    const std::size_t at = buffer.size();
    buffer.resize(at + dp::encoded_size(in));
    dp::encode_record(in, timestamp++, 4242, 4243, buffer.data() + at);
  }
  return buffer;
}

void write_records(const std::filesystem::path& dir) {
  static const GUID provider = {
      0x3b9c9951, 0x3480, 0x4220, {0x93, 0x77, 0x9c, 0x8e, 0x51, 0x32, 0xf5, 0xa1}};
  static const GUID activity = {
      0x11111111, 0x2222, 0x3333, {0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55}};
  static const EVENT_DESCRIPTOR descriptor = {7, 1, 0x10, 4, 0, 2, 0x8000000000000001ull};
  static const std::uint8_t payload[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  const std::vector<std::uint8_t> traits = etwh::build_traits_blob("Fuzz.Provider", {});
  EVENT_DATA_DESCRIPTOR data{};
  data.Ptr = reinterpret_cast<ULONGLONG>(payload);
  data.Size = sizeof payload;

  dp::EventInput bare;
  bare.provider_id = &provider;
  bare.descriptor = &descriptor;
  dp::EventInput full = bare;
  full.activity_id = &activity;
  full.related_activity_id = &activity;
  full.provider_traits = std::as_bytes(std::span(traits));
  full.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, 1);
  dp::EventInput with_payload = bare;
  with_payload.user_data = full.user_data;
  // Every item a record can carry: also TraceLogging metadata and a timestamp override.
  static const std::byte schema[] = {std::byte{6},   std::byte{0},   std::byte{0},
                                     std::byte{'E'}, std::byte{'v'}, std::byte{0}};
  static const std::uint64_t stamp = 0x0102030405060708ull;
  dp::EventInput every_item = full;
  every_item.event_schema = schema;
  every_item.timestamp_override = &stamp;

  const std::vector<std::pair<std::string, std::vector<dp::EventInput>>> seeds = {
      {"bare", {bare}},
      {"payload", {with_payload}},
      {"extended_items", {full}},
      {"three_in_a_row", {bare, full, with_payload}},
      {"every_item", {every_item, bare}},
  };
  for (const auto& [name, inputs] : seeds) {
    const std::vector<std::byte> buffer = buffer_of(inputs);
    write_file(dir / (name + ".bin"), buffer.data(), buffer.size());
  }
}

void write_traits(const std::filesystem::path& dir) {
  static const GUID group = {
      0x4f50731a, 0x89cf, 0x4782, {0xb3, 0xe0, 0xdc, 0xe8, 0xc9, 0x04, 0x76, 0xba}};
  const std::vector<std::pair<std::string, std::vector<std::uint8_t>>> seeds = {
      {"name_only", etwh::build_traits_blob("Fuzz.Provider", {})},
      {"empty_name", etwh::build_traits_blob("", {})},
      {"group", etwh::build_traits_blob("Fuzz.Grouped", {etwh::group_trait(group)})},
      {"custom", etwh::build_traits_blob("Fuzz.Custom", {{2, {0xde, 0xad}}, {0x80, {}}})},
  };
  for (const auto& [name, blob] : seeds)
    write_file(dir / (name + ".bin"), blob.data(), blob.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_binary_seeds CORPUS_DIR\n";
    return 2;
  }
  try {
    const std::filesystem::path root = argv[1];
    std::filesystem::create_directories(root / "dataplane_records");
    std::filesystem::create_directories(root / "traits");
    write_records(root / "dataplane_records");
    write_traits(root / "traits");
  } catch (const std::exception& e) {
    std::cerr << "fuzz_binary_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
