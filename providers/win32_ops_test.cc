// win32_ops against the recording fake (testing/fake_etw.h): what reaches Win32 for each
// request, and how malformed requests are refused before anything reaches it.
#include "win32_ops.h"
#include "tests/lib/thrown.h"

#include "testing/fake_etw.h"
#include "win32_text.h"

#include <gtest/gtest.h>

#include <cstring>

namespace etwh {
namespace {

using nlohmann::json;

const char* kProvider = "{6a399ae0-4bc6-4de9-870b-3657f8947e7e}";

EVENT_TRACE_PROPERTIES header_of(const std::vector<std::uint8_t>& bytes) {
  EVENT_TRACE_PROPERTIES p{};
  EXPECT_GE(bytes.size(), sizeof p);
  std::memcpy(&p, bytes.data(), std::min(bytes.size(), sizeof p));
  return p;
}

std::string error_of(const std::function<void()>& f) {
  return test_support::thrown<BadRequest>(f, "<no BadRequest>");
}

class Win32Ops : public ::testing::Test {
 protected:
  void SetUp() override { fake_etw::reset(); }
  Controller controller;
};

TEST(TraitsBlob, SizesAddUpAndNameIsNulTerminated) {
  auto blob = build_traits_blob("MyProvider", {{200, {0xAA, 0xBB}}, {129, {}}});
  // 2 (TraitsSize) + 10 + 1 (name, NUL) + (3 + 2) + (3 + 0)
  ASSERT_EQ(blob.size(), 21u);
  EXPECT_EQ(blob[0] | (blob[1] << 8), 21);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&blob[2])), "MyProvider");
  EXPECT_EQ(blob[12], 0);
  EXPECT_EQ(blob[13] | (blob[14] << 8), 5);
  EXPECT_EQ(blob[15], 200);
  EXPECT_EQ(blob[16], 0xAA);
  EXPECT_EQ(blob[17], 0xBB);
  EXPECT_EQ(blob[18] | (blob[19] << 8), 3);
  EXPECT_EQ(blob[20], 129);
}

TEST(TraitsBlob, GroupTraitCarriesTheGuidInItsSixteenBytes) {
  GUID g = parse_guid(kProvider).value();
  Trait t = group_trait(g);
  EXPECT_EQ(t.type, 1);
  ASSERT_EQ(t.data.size(), 16u);
  GUID back{};
  std::memcpy(&back, t.data.data(), 16);  // x64 stores GUIDs little-endian
  EXPECT_EQ(back, g);
  auto blob = build_traits_blob("P", {t});
  EXPECT_EQ(blob.size(), 2u + 2u + 19u);
  EXPECT_EQ(blob[4] | (blob[5] << 8), 19);
}

TEST(TraitsBlob, RefusesWhatCannotBeEncoded) {
  EXPECT_NE(error_of([] { build_traits_blob(std::string("a\0b", 3), {}); }).find("provider_name"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              build_traits_blob("P", {{128, std::vector<std::uint8_t>(70000)}});
            }).find("traits[0]"),
            std::string::npos);
  std::vector<Trait> many(3, Trait{128, std::vector<std::uint8_t>(30000)});
  EXPECT_NE(error_of([&] { build_traits_blob("P", many); }).find("traits:"), std::string::npos);
}

TEST_F(Win32Ops, StartSessionBuildsAProperlySizedPropertiesBuffer) {
  json reply = controller.start_session({{"session", "a"}, {"name", "etwh-s1"}});
  EXPECT_EQ(reply["status"], 0);
  ASSERT_EQ(fake_etw::log().starts.size(), 1u);
  const auto& call = fake_etw::log().starts[0];
  EXPECT_EQ(call.name.value(), "etwh-s1");
  EXPECT_FALSE(call.handle_null);
  EVENT_TRACE_PROPERTIES p = header_of(call.properties);
  EXPECT_EQ(p.Wnode.BufferSize, sizeof(EVENT_TRACE_PROPERTIES) + std::strlen("etwh-s1") + 1);
  EXPECT_EQ(p.Wnode.Flags, static_cast<ULONG>(WNODE_FLAG_TRACED_GUID));
  EXPECT_EQ(p.Wnode.ClientContext, 1u);
  EXPECT_EQ(p.LogFileMode, static_cast<ULONG>(EVENT_TRACE_REAL_TIME_MODE));
  EXPECT_EQ(p.LoggerNameOffset, sizeof(EVENT_TRACE_PROPERTIES));
  EXPECT_EQ(p.LogFileNameOffset, 0u);
  EXPECT_EQ(reply["handle"], format_hex(controller.handle_of("a").value()));
  EXPECT_FALSE(controller.handle_of("b"));
}

TEST_F(Win32Ops, StartSessionAppliesSettingsAndLogFileName) {
  controller.start_session({{"session", "a"},
                            {"name", "n"},
                            {"buffer_size_kb", 64},
                            {"minimum_buffers", 4},
                            {"maximum_buffers", 9},
                            {"flush_timer", 2},
                            {"log_file_mode", EVENT_TRACE_FILE_MODE_SEQUENTIAL},
                            {"log_file_name", "/tmp/x.etl"}});
  const auto& bytes = fake_etw::log().starts.at(0).properties;
  EVENT_TRACE_PROPERTIES p = header_of(bytes);
  EXPECT_EQ(p.BufferSize, 64u);
  EXPECT_EQ(p.MinimumBuffers, 4u);
  EXPECT_EQ(p.MaximumBuffers, 9u);
  EXPECT_EQ(p.FlushTimer, 2u);
  EXPECT_EQ(p.LogFileMode, static_cast<ULONG>(EVENT_TRACE_FILE_MODE_SEQUENTIAL));
  EXPECT_EQ(p.LogFileNameOffset, sizeof(EVENT_TRACE_PROPERTIES) + 2);
  EXPECT_EQ(p.Wnode.BufferSize, sizeof(EVENT_TRACE_PROPERTIES) + 2 + 11);
  EXPECT_STREQ(reinterpret_cast<const char*>(&bytes[p.LogFileNameOffset]), "/tmp/x.etl");
}

TEST_F(Win32Ops, RawOverridesReachStartTraceUnchanged) {
  controller.start_session({{"session", "a"},
                            {"name", "n"},
                            {"raw", {{"wnode_buffer_size", 16}, {"logger_name_offset", 4096}}}});
  controller.start_session({{"session", "b"},
                            {"name", "n"},
                            {"raw", {{"wnode_buffer_size", 8192}, {"log_file_name_offset", 3}}}});
  controller.start_session({{"session", "c"},
                            {"name", "n"},
                            {"raw", {{"null_properties", true}, {"null_handle", true}}}});
  const auto& starts = fake_etw::log().starts;
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0].properties.size(), 16u);
  EXPECT_EQ(header_of(starts[1].properties).LoggerNameOffset, sizeof(EVENT_TRACE_PROPERTIES));
  EXPECT_EQ(header_of(starts[1].properties).LogFileNameOffset, 3u);
  EXPECT_EQ(starts[1].properties.size(), 8192u);  // the buffer really is that large
  EVENT_TRACE_PROPERTIES p0{};
  std::memcpy(&p0, starts[0].properties.data(), 16);
  EXPECT_EQ(p0.Wnode.BufferSize, 16u);
  EXPECT_TRUE(starts[2].properties.empty());
  EXPECT_TRUE(starts[2].handle_null);
}

TEST_F(Win32Ops, ControlReturnsTheCounters) {
  controller.start_session({{"session", "a"}, {"name", "n"}});
  fake_etw::log().control_fill = 100;
  json reply = controller.control({{"session", "a"}, {"code", EVENT_TRACE_CONTROL_QUERY}});
  EXPECT_EQ(reply["status"], 0);
  const json& p = reply["properties"];
  EXPECT_EQ(p["buffer_size"], 101);
  EXPECT_EQ(p["minimum_buffers"], 102);
  EXPECT_EQ(p["maximum_buffers"], 103);
  EXPECT_EQ(p["number_of_buffers"], 104);
  EXPECT_EQ(p["free_buffers"], 105);
  EXPECT_EQ(p["events_lost"], 106);
  EXPECT_EQ(p["buffers_written"], 107);
  EXPECT_EQ(p["log_buffers_lost"], 108);
  EXPECT_EQ(p["real_time_buffers_lost"], 109);
  EXPECT_EQ(p["flush_timer"], 110);
  EXPECT_EQ(p["log_file_mode"], 111);
  EXPECT_EQ(p["logger_name"], "fake-session");
  const auto& call = fake_etw::log().controls.at(0);
  EXPECT_EQ(call.handle, controller.handle_of("a").value());
  EXPECT_FALSE(call.name);
  EXPECT_EQ(call.code, static_cast<ULONG>(EVENT_TRACE_CONTROL_QUERY));

  controller.control({{"name", "other"}, {"code", EVENT_TRACE_CONTROL_STOP}});
  EXPECT_EQ(fake_etw::log().controls.at(1).name.value(), "other");
  EXPECT_EQ(fake_etw::log().controls.at(1).handle, 0u);
}

TEST_F(Win32Ops, EnableEx2PassesParametersAndFilters) {
  controller.start_session({{"session", "a"}, {"name", "n"}});
  json reply = controller.enable(
      {{"session", "a"},
       {"guid", kProvider},
       {"control_code", 1},
       {"level", 5},
       {"match_any", "0xff00000000000001"},
       {"match_all", "0x1"},
       {"timeout_ms", 250},
       {"parameters",
        {{"enable_property", EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0},
         {"source_id", "{00000000-0000-0000-0000-0000000000aa}"},
         {"filters",
          {{{"type", 0x80000004}, {"data", "01000000"}}, {{"type", 0}, {"data", ""}}}}}}});
  EXPECT_EQ(reply["status"], 0);
  const auto& call = fake_etw::log().enables.at(0);
  EXPECT_EQ(call.api, "EnableTraceEx2");
  EXPECT_EQ(call.handle, controller.handle_of("a").value());
  EXPECT_EQ(format_guid(call.provider), kProvider);
  EXPECT_EQ(call.level, 5);
  EXPECT_EQ(call.match_any, 0xff00000000000001ull);
  EXPECT_EQ(call.match_all, 1u);
  EXPECT_EQ(call.timeout, 250u);
  ASSERT_TRUE(call.has_parameters);
  EXPECT_EQ(call.parameters.Version, static_cast<ULONG>(ENABLE_TRACE_PARAMETERS_VERSION_2));
  EXPECT_EQ(call.parameters.EnableProperty,
            static_cast<ULONG>(EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0));
  EXPECT_EQ(call.parameters.SourceId.Data4[7], 0xaa);
  EXPECT_EQ(call.parameters.FilterDescCount, 2u);
  ASSERT_EQ(call.filters.size(), 2u);
  EXPECT_EQ(call.filters[0].type, 0x80000004u);
  EXPECT_EQ(call.filters[0].data, (std::vector<std::uint8_t>{1, 0, 0, 0}));
  EXPECT_TRUE(call.filters[1].data.empty());
}

TEST_F(Win32Ops, EnableWithoutParametersPassesNull) {
  controller.enable({{"handle", "0x42"},
                     {"guid", kProvider},
                     {"control_code", 0},
                     {"level", 0},
                     {"match_any", "0x0"}});
  const auto& call = fake_etw::log().enables.at(0);
  EXPECT_EQ(call.handle, 0x42u);
  EXPECT_FALSE(call.has_parameters);
  EXPECT_EQ(call.timeout, 0u);
}

// An enable request of kProvider on session 0x7 through the older `api`.
json legacy_enable(const char* api, int level, const char* match_any) {
  return {{"handle", "0x7"}, {"guid", kProvider},      {"control_code", 1},
          {"level", level},  {"match_any", match_any}, {"api", api}};
}

TEST_F(Win32Ops, LegacyApis) {
  controller.enable(legacy_enable("EnableTrace", 3, "0xf0"));
  json with_parameters = legacy_enable("EnableTraceEx", 4, "0x3");
  with_parameters["match_all"] = "0x1";
  with_parameters["parameters"] = {{"source_id", kProvider},
                                   {"enable_property", 16},
                                   {"filters", {{{"type", 1}, {"data", "ab"}}}}};
  controller.enable(with_parameters);
  controller.enable(legacy_enable("EnableTraceEx", 4, "0x3"));
  const auto& e = fake_etw::log().enables;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].api, "EnableTrace");
  EXPECT_EQ(e[0].match_any, 0xf0u);
  EXPECT_EQ(e[0].level, 3);
  EXPECT_EQ(e[1].api, "EnableTraceEx");
  EXPECT_EQ(format_guid(e[1].source_id.value()), kProvider);
  EXPECT_EQ(e[1].enable_property, 16u);
  ASSERT_EQ(e[1].filters.size(), 1u);
  EXPECT_EQ(e[1].filters[0].data, std::vector<std::uint8_t>{0xab});
  EXPECT_FALSE(e[2].source_id);
  EXPECT_TRUE(e[2].filters.empty());
}

struct BadCase {
  json request;
  std::string field;  // BadRequest's message must start with this
};

TEST_F(Win32Ops, MalformedEnableRequestsNameTheFieldAndCallNothing) {
  controller.start_session({{"session", "a"}, {"name", "n"}});
  json good = {{"session", "a"},
               {"guid", kProvider},
               {"control_code", 1},
               {"level", 5},
               {"match_any", "0x1"}};
  auto with = [&](const std::string& key, json value) {
    json r = good;
    r[key] = std::move(value);
    return r;
  };
  auto without = [&](const std::string& key) {
    json r = good;
    r.erase(key);
    return r;
  };
  std::vector<BadCase> cases = {
      {without("guid"), "guid: missing"},
      {with("guid", "{not-a-guid}"), "guid: malformed GUID"},
      {with("level", 256), "level: must be an integer in [0, 255]"},
      {with("level", -1), "level:"},
      {with("level", "5"), "level:"},
      {with("match_any", 1), "match_any: must be a \"0x...\" hex string"},
      {with("match_any", "0x10000000000000000"), "match_any:"},
      {without("match_any"), "match_any: missing"},
      {with("session", "zz"), "session: no session labelled \"zz\""},
      {with("handle", "0x1"), "session: give either"},
      {without("session"), "session: missing"},
      {with("api", "EnableTrace3"), "api:"},
      {with("matchany", "0x1"), "matchany: unknown field"},
      {with("parameters", 3), "parameters: must be a JSON object"},
      {with("parameters", {{"filters", {{{"type", 1}}}}}), "parameters.filters[0].data: missing"},
      {with("parameters", {{"filters", {{{"type", 1}, {"data", "abc"}}}}}),
       "parameters.filters[0].data: must be an even number"},
      {with("parameters", {{"source_id", "x"}}), "parameters.source_id: malformed GUID"},
      {with("parameters", {{"bogus", 1}}), "parameters.bogus: unknown field"},
  };
  json legacy = with("api", "EnableTrace");
  json bad_legacy_any = legacy;
  bad_legacy_any["match_any"] = "0x100000000";
  cases.push_back({bad_legacy_any, "match_any: EnableTrace's EnableFlag has 32 bits"});
  json legacy_params = legacy;
  legacy_params["parameters"] = json::object();
  cases.push_back({legacy_params, "parameters: EnableTrace takes no parameters"});
  json ex_two_filters = with("api", "EnableTraceEx");
  ex_two_filters["parameters"] = {
      {"filters", {{{"type", 1}, {"data", ""}}, {{"type", 1}, {"data", ""}}}}};
  cases.push_back({ex_two_filters, "parameters.filters: EnableTraceEx takes at most one filter"});
  json ex_timeout = with("api", "EnableTraceEx");
  ex_timeout["timeout_ms"] = 5;
  cases.push_back({ex_timeout, "timeout_ms: EnableTraceEx has no timeout"});

  for (const auto& c : cases) {
    std::string message = error_of([&] { controller.enable(c.request); });
    EXPECT_EQ(message.rfind(c.field, 0), 0u) << c.request.dump() << " gave: " << message;
  }
  EXPECT_TRUE(fake_etw::log().enables.empty());
}

TEST_F(Win32Ops, MalformedStartAndControlRequestsNameTheField) {
  controller.start_session({{"session", "a"}, {"name", "n"}});
  std::vector<BadCase> cases = {
      {json{{"name", "n"}}, "session: missing"},
      {json{{"session", "b"}}, "name: missing"},
      {json{{"session", "a"}, {"name", "n"}}, "session: label \"a\" already"},
      {json{{"session", "b"}, {"name", "n"}, {"buffer_size_kb", -4}}, "buffer_size_kb:"},
      {json{{"session", "b"}, {"name", "n"}, {"log_file_mode", 4294967296}}, "log_file_mode:"},
      {json{{"session", "b"}, {"name", "n"}, {"raw", {{"null_properties", 1}}}},
       "raw.null_properties: must be true or false"},
      {json{{"session", "b"}, {"name", "n"}, {"raw", {{"wnode_size", 1}}}},
       "raw.wnode_size: unknown field"},
      {json{{"session", "b"}, {"name", 7}}, "name: must be a string"},
  };
  for (const auto& c : cases) {
    std::string message = error_of([&] { controller.start_session(c.request); });
    EXPECT_EQ(message.rfind(c.field, 0), 0u) << c.request.dump() << " gave: " << message;
  }
  EXPECT_EQ(fake_etw::log().starts.size(), 1u);

  std::vector<BadCase> control_cases = {
      {json{{"session", "a"}}, "code: missing"},
      {json{{"code", 0}}, "session: missing"},
      {json{{"session", "zz"}, {"code", 0}}, "session: no session labelled"},
      {json{{"session", "a"}, {"name", "n"}, {"code", 0}}, "session: give either"},
      {json{{"name", "n"}, {"code", 0}, {"flush", 1}}, "flush: unknown field"},
  };
  for (const auto& c : control_cases) {
    std::string message = error_of([&] { controller.control(c.request); });
    EXPECT_EQ(message.rfind(c.field, 0), 0u) << c.request.dump() << " gave: " << message;
  }
  EXPECT_TRUE(fake_etw::log().controls.empty());
}

}  // namespace
}  // namespace etwh
