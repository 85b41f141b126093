// Fuzz target: the broker's request handling (requests.h decode_request, then BrokerState::
// handle, the two steps broker_main.cc runs per frame), without sockets. The input is a
// sequence of frame bodies, one JSON value per line, each from one of three peers chosen by
// the line's first character ('1'..'3'; peer 3 runs as another user, so its requests must be
// refused). A frame decode_request refuses must come back with a reason and an error status;
// a request that makes handle() throw, an outbox message that is not a JSON object, or state
// left behind once every peer has gone and the sessions were stopped is a finding.
#include "fuzz_target.h"

#include "broker_state.h"
#include "requests.h"

#include <sstream>
#include <string>

namespace {

using etwrt::broker::BrokerState;
using etwrt::broker::Decoded;
using etwrt::broker::DecodeError;
using etwrt::broker::Request;
using nlohmann::json;

constexpr int kPeers = 3;

void check_outbox(BrokerState& state) {
  for (const etwrt::broker::Outgoing& o : state.take_outbox()) {
    if (!o.message.is_object())
      etwh::fuzz::finding("the broker queued a message that is not an object");
    if (o.peer < 1 || o.peer > kPeers) etwh::fuzz::finding("the broker wrote to an unknown peer");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Few sessions, so that an input cannot make the run create pools without end.
  BrokerState state(4);
  state.disable_log_files();  // a fuzzed LogFileName must not create or truncate a file
  for (int peer = 1; peer <= kPeers; ++peer) state.connect(peer, peer != kPeers);
  std::istringstream input(etwh::fuzz::as_text(data, size));
  for (std::string line; std::getline(input, line);) {
    if (line.empty()) continue;
    const int peer = line[0] >= '1' && line[0] <= '3' ? line[0] - '0' : 1;
    const json frame = json::parse(line.substr(1), nullptr, /*allow_exceptions=*/false);
    if (frame.is_discarded()) continue;  // the frame reader refuses it before decoding
    const Decoded decoded = etwrt::broker::decode_request(frame);
    if (const auto* bad = std::get_if<DecodeError>(&decoded)) {
      if (bad->reason.empty() || bad->status == 0) {
        etwh::fuzz::finding("a refused frame got no reason or a success status");
      }
      continue;
    }
    try {
      state.handle(peer, std::get<Request>(decoded));
    } catch (const std::exception& e) {
      etwh::fuzz::finding(std::string("BrokerState::handle threw: ") + e.what());
    }
    check_outbox(state);
  }
  for (int peer = 1; peer <= kPeers; ++peer) state.disconnect(peer);
  state.stop_all_sessions();
  check_outbox(state);
  if (!state.idle()) etwh::fuzz::finding("sessions or peers left after every peer went");
  return 0;
}
