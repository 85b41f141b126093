// parse_manifest: what it takes from a manifest and the precise reason (line:col) it refuses one.
#include "manifest.h"

#include <tdh.h>

#include <gtest/gtest.h>

#include <string>

namespace {

std::string manifest(const std::string& provider_body) {
  return "<instrumentationManifest xmlns='http://schemas.microsoft.com/win/2004/08/events'>\n"
         "<instrumentation><events>\n"
         "<provider name='P' guid='{01234567-89AB-CDEF-0123-456789ABCDEF}'>\n" +
         provider_body + "</provider></events></instrumentation></instrumentationManifest>\n";
}

TEST(Manifest, DescriptorFromLevelTaskOpcodeKeywordsAndChannel) {
  const auto r = etwrt::parse_manifest(manifest(
      "<channels><importChannel chid='sys' name='System'/><channel chid='c' name='P/Ops' "
      "type='Operational'/></channels>"
      "<tasks><task name='T' value='0x20'/></tasks>"
      "<keywords><keyword name='A' mask='0x10'/><keyword name='B' mask='0x8000'/></keywords>"
      "<events><event value='300' version='2' level='win:Verbose' task='T' opcode='win:Stop' "
      "keywords='A B' channel='c'/></events>"));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.events.size(), 1u);
  const EVENT_DESCRIPTOR& d = r.events[0].descriptor;
  EXPECT_EQ(d.Id, 300);
  EXPECT_EQ(d.Version, 2);
  EXPECT_EQ(d.Level, 5);
  EXPECT_EQ(d.Task, 0x20);
  EXPECT_EQ(d.Opcode, 2);
  EXPECT_EQ(d.Keyword, 0x8010u);
  EXPECT_EQ(d.Channel, 17);  // mc.exe numbers channels without a value from 16, in order
  EXPECT_EQ(r.events[0].provider.Data1, 0x01234567u);
  EXPECT_EQ(r.events[0].provider.Data4[7], 0xEF);
  EXPECT_EQ(r.events[0].level_name, "Verbose");
  EXPECT_EQ(r.events[0].opcode_name, "Stop");
}

// The manifest schema's TaskType may hold opcodes of its own (the CLR's manifest defines most of
// its opcodes so): an event's opcode is its task's, then the provider's; another task's events
// do not see it.
TEST(Manifest, OpcodesATaskDefinesForItsEvents) {
  const std::string body =
      "<tasks><task name='GC' value='1'><opcodes><opcode name='Mark' value='202'/>"
      "<opcode name='Same' value='40'/></opcodes></task><task name='Other' value='2'/></tasks>"
      "<opcodes><opcode name='Same' value='30'/></opcodes>"
      "<events><event value='1' task='GC' opcode='Mark'/><event value='2' task='GC' "
      "opcode='Same'/><event value='3' task='Other' opcode='Same'/>";
  const auto r = etwrt::parse_manifest(manifest(body + "</events>"));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].descriptor.Opcode, 202);
  EXPECT_EQ(r.events[0].opcode_name, "Mark");
  EXPECT_EQ(r.events[1].descriptor.Opcode, 40);  // The task's, before the provider's.
  EXPECT_EQ(r.events[2].descriptor.Opcode, 30);
  const auto refused = etwrt::parse_manifest(
      manifest(body + "<event value='4' task='Other' opcode='Mark'/></events>"));
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("opcode \"Mark\" is not defined"), std::string::npos)
      << refused.error;
}

// EventManifest's TemplateItemType (data and struct), MapType (valueMap, bitMap) and the map
// attribute of data.
TEST(Manifest, StructsAndMaps) {
  const auto r = etwrt::parse_manifest(
      manifest("<maps><valueMap name='V'><map value='1' message='$(string.one)'/></valueMap>"
               "<bitMap name='B'><map value='0x8' message='$(string.eight)'/></bitMap></maps>"
               "<templates><template tid='T'><data name='n' inType='win:UInt16'/>"
               "<struct name='s' count='n'><data name='len' inType='win:UInt8'/>"
               "<data name='bytes' inType='win:Binary' length='len'/>"
               "<data name='kind' inType='win:UInt32' map='B'/></struct>"
               "<data name='way' inType='win:UInt8' map='V'/></template></templates>"
               "<events><event value='1' template='T'/></events>"));
  ASSERT_TRUE(r.ok) << r.error;
  const auto& e = r.events.at(0);
  ASSERT_EQ(e.fields.size(), 3u);
  const etwrt::ManifestField& s = e.fields[1];
  EXPECT_TRUE(s.is_struct);
  EXPECT_EQ(s.count.kind, etwrt::ManifestParam::kField);
  EXPECT_EQ(s.count.field, 0u);
  ASSERT_EQ(s.members.size(), 3u);
  EXPECT_EQ(s.members[1].length.field, 0u);  // a member's length names a member
  EXPECT_EQ(s.members[2].map, "B");
  EXPECT_EQ(e.fields[2].map, "V");
  ASSERT_EQ(e.maps.size(), 2u);
  EXPECT_FALSE(e.maps[0].bitmap);
  EXPECT_TRUE(e.maps[1].bitmap);
  EXPECT_EQ(e.maps[1].entries.at(0).first, 8u);
}

TEST(Manifest, RefusalsSayWhereAndWhy) {
  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {"<instrumentationManifest><a>", "1:28: not XML"},
      {"<events/>", "1:1: the root element is <events>, not <instrumentationManifest>"},
      {manifest("<events><event value='1' task='Nowhere'/></events>"),
       "4:9: task \"Nowhere\" is not defined"},
      {manifest("<events><event value='70000'/></events>"),
       "4:9: attribute value is not a number up to 65535: \"70000\""},
      {manifest("<events><event value='1' template='T'/></events>"),
       "4:9: template \"T\" is not defined"},
      {manifest("<templates><template tid='T'><data name='x' inType='win:Nope'/></template>"
                "</templates>"),
       "4:30: inType \"win:Nope\" is not a type etwrt knows"},
      {manifest("<templates><template tid='T'><data name='b' inType='win:Binary' "
                "length='n'/></template></templates>"),
       "4:30: length \"n\" names no earlier UInt8, UInt16 or UInt32 field"},
      {manifest("<templates><template tid='T'><binary name='s'/></template></templates>"),
       "4:30: <binary> in a template: etwrt decodes data and struct elements"},
      {manifest("<templates><template tid='T'><struct name='s'><struct name='t'/></struct>"
                "</template></templates>"),
       "4:47: <struct> in a struct: etwrt decodes data members only"},
      {manifest("<templates><template tid='T'><data name='x' inType='win:UInt32' map='M'/>"
                "</template></templates>"),
       "4:30: map \"M\" is not defined"},
  };
  for (const Case& c : cases) {
    const auto r = etwrt::parse_manifest(c.text);
    EXPECT_FALSE(r.ok) << c.text;
    EXPECT_EQ(r.error.substr(0, c.error.size()), c.error) << r.error;
  }
  // A provider GUID must be one.
  const auto bad = etwrt::parse_manifest(
      "<instrumentationManifest><instrumentation><events><provider name='P' guid='{nope}'/>"
      "</events></instrumentation></instrumentationManifest>");
  EXPECT_NE(bad.error.find("guid \"{nope}\""), std::string::npos) << bad.error;
}

}  // namespace
