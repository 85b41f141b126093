#include "harness/recorded/trace_reader.h"

#include "decode.h"
#include "win32_text.h"

#include <etwh/utf16.h>

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>
#include <tdh.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <string_view>
#include <unordered_map>

namespace etwh::recorded {
namespace {

// EventTraceGuid (evntrace.h), spelt here: mingw-w64 defines it only under INITGUID.
constexpr GUID kEventTraceGuid = {
    0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};

std::string guid_text(const GUID& g) {
  std::string s = format_guid(g);  // {8-4-4-4-12}
  return s.size() > 2 ? s.substr(1, s.size() - 2) : s;
}

// An event kind's identity, as words: the provider, the descriptor's 16 bytes, the blobs.
struct KindKey {
  std::uint64_t w[6] = {};
  bool operator==(const KindKey& o) const { return std::memcmp(w, o.w, sizeof w) == 0; }
};
struct KindKeyHash {
  std::size_t operator()(const KindKey& k) const {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : k.w) h = (h ^ v) * 0x100000001b3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// The blobs of one extended item type, each content kept once.
class BlobTable {
 public:
  explicit BlobTable(std::vector<Blob>& out) : out_(out) {}
  std::uint32_t index(const std::uint8_t* p, std::size_t n, RecordNumber at) {
    const std::string_view view(reinterpret_cast<const char*>(p), n);
    auto it = index_.find(view);
    if (it != index_.end()) return it->second;
    const auto i = static_cast<std::uint32_t>(out_.size());
    out_.push_back(Blob{std::vector<std::uint8_t>(p, p + n), at});
    const std::string& kept = keys_.emplace_back(view);
    index_.emplace(std::string_view(kept), i);
    return i;
  }

 private:
  std::vector<Blob>& out_;
  std::deque<std::string> keys_;  // stable: the map's views point into it
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

// A traits blob's provider name: UINT16 size, then the NUL-terminated UTF-8 name.
std::string traits_name(const Blob& b) {
  if (b.bytes.size() < 3) return {};
  const auto* p = reinterpret_cast<const char*>(b.bytes.data() + 2);
  return std::string(p, strnlen(p, b.bytes.size() - 2));
}

DecodedEvent decoded_of(const nlohmann::json& d) {
  DecodedEvent e;
  e.name = d.value("name", "");
  for (const nlohmann::json& f : d.value("fields", nlohmann::json::array())) {
    e.fields.push_back({f.value("name", ""), f.value("value", "")});
  }
  return e;
}

class Reader {
 public:
  explicit Reader(RecordedTrace& t) : t_(t), metadata_(t.metadata), traits_(t.traits) {}

  static void WINAPI on_record(PEVENT_RECORD record) {
    static_cast<Reader*>(record->UserContext)->record(*record);
  }

 private:
  void record(const EVENT_RECORD& r);
  void order(std::int64_t stamp, RecordNumber at);
  void first_of_kind(const EVENT_RECORD& r, EventKind& k);

  RecordedTrace& t_;
  BlobTable metadata_, traits_;
  std::unordered_map<KindKey, std::uint32_t, KindKeyHash> kinds_;
  std::unordered_map<std::string, bool> named_;  // providers whose name is known
  std::int64_t last_stamp_ = 0;
};

void Reader::order(std::int64_t stamp, RecordNumber at) {
  if (at > 1 && stamp < last_stamp_) {
    if (t_.inversions++ == 0) {
      t_.first_inversion = at;
      t_.inversion_before = last_stamp_;
      t_.inversion_after = stamp;
    }
  }
  last_stamp_ = stamp;
  if (stamp < t_.start_time) {
    if (t_.before_start++ == 0) {
      t_.first_before_start = at;
      t_.first_before_start_stamp = stamp;
    }
  }
}

void Reader::first_of_kind(const EVENT_RECORD& r, EventKind& k) {
  const nlohmann::json d = agent::decode_event(r, 0);
  if (d.contains("status")) {
    k.decode_status = d.value("status", 0u);
  } else {
    k.decoded = decoded_of(d);
  }
  if (named_.count(k.provider)) return;
  std::string name;
  if (k.decoded) {
    ULONG status = 0;
    const std::vector<std::uint8_t> info = agent::event_information(r, status);
    if (status == ERROR_SUCCESS && info.size() >= sizeof(TRACE_EVENT_INFO)) {
      TRACE_EVENT_INFO head;
      std::memcpy(&head, info.data(), sizeof head);
      name = utf16::utf8_name_at(info, head.ProviderNameOffset);
    }
  }
  if (name.empty() && k.traits != kNoBlob) name = traits_name(t_.traits[k.traits]);
  if (name.empty()) return;
  named_[k.provider] = true;
  t_.names.push_back({k.provider, name});
}

void Reader::record(const EVENT_RECORD& r) {
  const RecordNumber at = ++t_.records;
  const EVENT_HEADER& h = r.EventHeader;
  if (at == 1) {
    t_.first_is_header = std::memcmp(&h.ProviderId, &kEventTraceGuid, sizeof(GUID)) == 0 &&
                         h.EventDescriptor.Opcode == 0;
    t_.first_record =
        guid_text(h.ProviderId) + " Opcode " + std::to_string(h.EventDescriptor.Opcode);
  }
  order(h.TimeStamp.QuadPart, at);
  KindKey key;
  std::memcpy(&key.w[0], &h.ProviderId, sizeof(GUID));
  std::memcpy(&key.w[2], &h.EventDescriptor, sizeof(EVENT_DESCRIPTOR));
  std::uint32_t meta = kNoBlob, traits = kNoBlob;
  for (USHORT i = 0; i < r.ExtendedDataCount && r.ExtendedData != nullptr; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = r.ExtendedData[i];
    const auto* p = reinterpret_cast<const std::uint8_t*>(item.DataPtr);
    if (p == nullptr) continue;
    if (item.ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL) {
      meta = metadata_.index(p, item.DataSize, at);
    } else if (item.ExtType == EVENT_HEADER_EXT_TYPE_PROV_TRAITS) {
      traits = traits_.index(p, item.DataSize, at);
    }
  }
  const bool classic = (h.Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) != 0;
  key.w[4] = (static_cast<std::uint64_t>(meta) << 32) | traits;
  key.w[5] = classic;
  auto [it, added] = kinds_.try_emplace(key, static_cast<std::uint32_t>(t_.kinds.size()));
  if (added) {
    EventKind k;
    k.provider = guid_text(h.ProviderId);
    agent::copy_descriptor(h.EventDescriptor, k);
    k.classic = classic;
    k.metadata = meta;
    k.traits = traits;
    k.first = at;
    k.first_payload_size = r.UserDataLength;
    first_of_kind(r, k);
    t_.kinds.push_back(std::move(k));
  }
  ++t_.kinds[it->second].count;
}

std::deque<std::vector<WCHAR>>& manifests() {
  static std::deque<std::vector<WCHAR>> loaded;
  return loaded;
}

}  // namespace

RecordedTrace read_trace(const std::string& file) {
  RecordedTrace t;
  t.file = file;
  const auto began = std::chrono::steady_clock::now();
  Reader reader(t);
  EVENT_TRACE_LOGFILEA logfile{};
  std::string name = file;
  logfile.LogFileName = name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = &Reader::on_record;
  logfile.Context = &reader;
  TRACEHANDLE handle = OpenTraceA(&logfile);
  if (handle == INVALID_PROCESSTRACE_HANDLE) {
    t.open_status = GetLastError();
    if (t.open_status == ERROR_SUCCESS) t.open_status = ERROR_INVALID_HANDLE;
    return t;
  }
  const TRACE_LOGFILE_HEADER& hdr = logfile.LogfileHeader;
  t.events_lost = hdr.EventsLost;
  t.buffers_lost = hdr.BuffersLost;
  t.buffers_written = hdr.BuffersWritten;
  t.pointer_size = hdr.PointerSize;
  t.log_file_mode = hdr.LogFileMode;
  t.start_time = hdr.StartTime.QuadPart;
  t.end_time = hdr.EndTime.QuadPart;
  t.process_status = ProcessTrace(&handle, 1, nullptr, nullptr);
  CloseTrace(handle);
  t.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return t;
}

std::uint32_t load_manifest(const std::string& manifest) {
  std::vector<WCHAR> path;
  for (char c : manifest) path.push_back(static_cast<WCHAR>(static_cast<unsigned char>(c)));
  path.push_back(0);
  const ULONG status = TdhLoadManifest(path.data());
  if (status == ERROR_SUCCESS) manifests().push_back(std::move(path));
  return status;
}

void unload_manifests() {
  for (std::vector<WCHAR>& path : manifests()) TdhUnloadManifest(path.data());
  manifests().clear();
}

}  // namespace etwh::recorded
