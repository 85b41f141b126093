// Fuzz target: etwrt's frame codec (runtime/src/wire: FrameReader), what the broker and the
// library run on every byte a peer sends. The input is read twice: whole, and cut into pieces
// at the places its own bytes choose (a socket delivers a stream in arbitrary pieces); both
// readings must yield the same messages, and the same verdict of corruption.
// TODO (fuzz/README.md): the broker's request handler, once it is a function of its own.
#include "fuzz_target.h"

#include "wire.h"

namespace {

struct Reading {
  std::vector<nlohmann::json> messages;  // a frame with a number out of range: a null here
  bool corrupt = false;
};

// Appends `pieces` in turn, taking every complete message after each, until corruption.
Reading read_frames(const std::vector<std::string_view>& pieces) {
  Reading out;
  etwrt::FrameReader reader;
  for (std::string_view piece : pieces) {
    reader.append(piece.data(), piece.size());
    // As the broker reads: a frame holding a number no double holds is answered, and the
    // reading goes on.
    for (;;) {
      bool out_of_range = false;
      std::optional<nlohmann::json> message = reader.next(out.corrupt, &out_of_range);
      if (out_of_range) message.emplace(nullptr);
      if (!message) break;
      out.messages.push_back(std::move(*message));
    }
    if (out.corrupt) break;  // the connection is dropped: nothing after it is read
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> pieces;
  // Each piece's length is its first byte's value (1..256): deterministic, input-chosen cuts.
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n =
        std::min<std::size_t>(1 + static_cast<unsigned char>(bytes[at]), bytes.size() - at);
    pieces.push_back(bytes.substr(at, n));
    at += n;
  }
  try {
    const Reading whole = read_frames({bytes});
    const Reading cut = read_frames(pieces);
    if (whole.corrupt != cut.corrupt || whole.messages != cut.messages) {
      etwh::fuzz::finding("the stream read whole and cut into " + std::to_string(pieces.size()) +
                          " pieces differ: " + std::to_string(whole.messages.size()) + " vs " +
                          std::to_string(cut.messages.size()) + " messages");
    }
  } catch (const std::exception& e) {
    etwh::fuzz::unexpected_exception(e);
  }
  return 0;
}
