// `etwh judge` on files etwrt writes itself: a provider's events recorded by a sequential file
// session (a private broker), read back through read_trace (OpenTrace, ProcessTrace, TDH) and
// judged. A clean provider gives no failure and the trace's own rules pass; a bad descriptor and
// bad TraceLogging metadata each fail their own rule, at the record of the event, with the
// event decoded where TDH can.
#include "etwh/platform.h"
#include "harness/environment/session_properties.h"
#include "harness/model/rules.h"
#include "harness/recorded/trace_judge.h"
#include "harness/recorded/trace_reader.h"
#include "tests/lib/scratch_dir.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

namespace etwh::recorded {
namespace {

namespace fs = std::filesystem;

const GUID kProvider = {
    0x3b0f2a6e, 0x51c4, 0x4d2b, {0x9a, 0x1e, 0x27, 0x6c, 0x0d, 0x44, 0x8f, 0x31}};
constexpr char kProviderText[] = "3b0f2a6e-51c4-4d2b-9a1e-276c0d448f31";

const Catalog& catalog() {
  static const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  return c;
}

class JudgeEtwrtFile : public ::testing::Test {
 protected:
  // Records what `write` writes with the provider registered and enabled, into `name`.etl.
  std::string record(const std::string& name, const std::function<void(REGHANDLE)>& write) {
    const std::string file = (dir_ / (name + ".etl")).string();
    Properties p;
    EVENT_TRACE_PROPERTIES* props = p.get();
    props->LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
    props->Wnode.ClientContext = 1;
    props->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 1025;
    std::strncpy(reinterpret_cast<char*>(props) + props->LogFileNameOffset, file.c_str(), 1024);
    const std::string session = "etwh-judge-" + name;
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, session.c_str(), props), static_cast<ULONG>(ERROR_SUCCESS));
    REGHANDLE reg = 0;
    EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), static_cast<ULONG>(ERROR_SUCCESS));
    EXPECT_EQ(
        EnableTraceEx2(h, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000, nullptr),
        static_cast<ULONG>(ERROR_SUCCESS));
    write(reg);
    EventUnregister(reg);
    Properties stop;
    EXPECT_TRUE(
        control_done(ControlTraceA(h, session.c_str(), stop.get(), EVENT_TRACE_CONTROL_STOP)));
    EXPECT_EQ(stop.get()->EventsLost, 0u);
    return file;
  }

  std::vector<CaseResult> judge(const std::string& file) {
    JudgeOptions o;
    o.catalog = &catalog();
    const RecordedTrace t = read_trace(file);
    EXPECT_EQ(t.open_status, 0u);
    EXPECT_EQ(t.process_status, 0u);
    return judge_traces({t}, o);
  }

  PrivateEtwrtHome home_;
  const test_support::ScratchDir scratch_{"etwh-judge"};
  const fs::path& dir_ = scratch_.path();
};

EVENT_DESCRIPTOR descriptor(std::uint16_t id, std::uint8_t channel) {
  EVENT_DESCRIPTOR d{};
  d.Id = id;
  d.Channel = channel;
  d.Level = 4;
  d.Keyword = 0x1;
  return d;
}

void write_events(REGHANDLE reg, const EVENT_DESCRIPTOR& d, int count) {
  std::uint32_t value = 0;
  EVENT_DATA_DESCRIPTOR data;
  for (int i = 0; i < count; ++i) {
    value = static_cast<std::uint32_t>(i);
    EventDataDescCreate(&data, &value, sizeof value);
    EXPECT_EQ(EventWrite(reg, &d, 1, &data), static_cast<ULONG>(ERROR_SUCCESS));
  }
}

const CaseResult* provider_case(const std::vector<CaseResult>& cases, const std::string& file) {
  const std::string id =
      "judge/" + fs::path(file).filename().string() + "/" + std::string(kProviderText);
  for (const CaseResult& c : cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<const Finding*> failures(const CaseResult& c) {
  std::vector<const Finding*> out;
  for (const Finding& f : c.findings) {
    if (f.severity == Severity::kFailure) out.push_back(&f);
  }
  return out;
}

TEST_F(JudgeEtwrtFile, CleanProviderPassesAndTheTraceItself) {
  const std::string file =
      record("clean", [](REGHANDLE reg) { write_events(reg, descriptor(7, 0), 20); });
  const std::vector<CaseResult> cases = judge(file);
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(cases.front().status, Status::kPass) << cases.front().message;
  const CaseResult* c = provider_case(cases, file);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kPass) << c->message;
  EXPECT_TRUE(failures(*c).empty()) << c->message;
}

TEST_F(JudgeEtwrtFile, BadDescriptorFailsDescChannelAtItsRecord) {
  const std::string file = record("channel", [](REGHANDLE reg) {
    write_events(reg, descriptor(7, 0), 3);
    write_events(reg, descriptor(8, 5), 2);  // channel 5: reserved
  });
  const std::vector<CaseResult> cases = judge(file);
  const CaseResult* c = provider_case(cases, file);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kFail);
  const auto failed = failures(*c);
  ASSERT_EQ(failed.size(), 1u) << c->message;
  EXPECT_EQ(failed[0]->rule, rules::kDescChannel);
  EXPECT_EQ(failed[0]->step.file, file);
  EXPECT_EQ(failed[0]->step.line, 5u);  // the header event, three good events, then it
}

TEST_F(JudgeEtwrtFile, BadTraceLoggingMetadataFailsTlMetaInType) {
  const std::string file = record("tl", [](REGHANDLE reg) {
    // Traits set, so that EventWrite honours the descriptors' Type (TL-TYPE-IGNORED).
    const std::uint8_t traits[] = {4, 0, 'P', 0};
    EXPECT_EQ(EventSetInformation(reg, EventProviderSetTraits, const_cast<std::uint8_t*>(traits),
                                  sizeof traits),
              static_cast<ULONG>(ERROR_SUCCESS));
    std::uint8_t meta[] = {9, 0, 0, 'E', 'v', 0, 'a', 0, 0};  // field "a": InType 0 (NULL)
    std::uint32_t value = 1;
    EVENT_DATA_DESCRIPTOR data[2];
    EventDataDescCreate(&data[0], meta, sizeof meta);
    data[0].Type = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
    EventDataDescCreate(&data[1], &value, sizeof value);
    const EVENT_DESCRIPTOR d = descriptor(0, 11);
    EXPECT_EQ(EventWrite(reg, &d, 2, data), static_cast<ULONG>(ERROR_SUCCESS));
  });
  const std::vector<CaseResult> cases = judge(file);
  const CaseResult* c = nullptr;
  for (const CaseResult& r : cases) {
    if (r.id == "judge/tl.etl/P") c = &r;  // named by its traits
  }
  ASSERT_NE(c, nullptr);
  const auto failed = failures(*c);
  ASSERT_EQ(failed.size(), 1u) << c->message;
  EXPECT_EQ(failed[0]->rule, rules::kTlMetaInType);
  EXPECT_EQ(failed[0]->step.line, 2u);
}

}  // namespace
}  // namespace etwh::recorded
