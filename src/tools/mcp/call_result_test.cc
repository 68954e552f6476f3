#include "tools/mcp/call_result.h"

#include <gtest/gtest.h>

namespace mecha::mcp {
namespace {

CallResult read(const std::string& text) {
  auto r = read_call_result(Json::parse(text), "result");
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : CallResult{};
}

TEST(CallResultTest, JoinsTextAndNamesWhatWasLeftOut) {
  CallResult r = read(R"({"content":[
      {"type":"text","text":"first"},
      {"type":"image","data":"AAAA","mimeType":"image/png"},
      {"type":"audio","data":"AAAAAA==","mimeType":"audio/wav"},
      {"type":"resource_link","uri":"test://static/1","name":"Blob 1"},
      {"type":"resource","resource":{"uri":"test://t/2","text":"inside"}},
      {"type":"resource","resource":{"uri":"test://b/3","blob":"AAAAAAAA","mimeType":"application/zip"}},
      {"type":"hologram"}]})");
  EXPECT_EQ(r.text,
            "first\n[image/png image of 3 bytes left out]\n[audio/wav audio of 4 bytes left "
            "out]\n[resource link: Blob 1 <test://static/1>]\n[resource test://t/2]\ninside\n"
            "[resource test://b/3: 6 bytes of application/zip left out]\n[a content block of "
            "type \"hologram\" left out]");
  EXPECT_FALSE(r.is_error);
  EXPECT_TRUE(r.structured.is_null());
}

TEST(CallResultTest, StructuredContentIsTheTextOnlyWhenThereIsNoText) {
  CallResult only = read(R"({"content":[],"structuredContent":{"t":33}})");
  EXPECT_EQ(only.text, R"({"t":33})");
  EXPECT_EQ(only.structured, Json::parse(R"({"t":33})"));
  CallResult both = read(R"({"content":[{"type":"text","text":"33 degrees"}],
                             "structuredContent":{"t":33}})");
  EXPECT_EQ(both.text, "33 degrees");
  EXPECT_EQ(both.structured, Json::parse(R"({"t":33})"));
}

TEST(CallResultTest, IsErrorBecomesIsError) {
  CallResult r = read(R"({"content":[{"type":"text","text":"no such city"}],"isError":true})");
  EXPECT_EQ(r, (CallResult{"no such city", true, Json()}));
}

TEST(CallResultTest, RefusesResultsOfTheWrongShape) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({})", "result: neither \"content\" nor \"structuredContent\" is present"},
      {R"({"content":"text"})", "result.content: expected an array, got string"},
      {R"({"content":[1]})", "result.content[0]: expected an object, got integer"},
      {R"({"content":[{"text":"x"}]})", "result.content[0]: \"type\" is missing"},
      {R"({"content":[{"type":"text"}]})", "result.content[0]: \"text\" is missing"},
      {R"({"content":[{"type":"text","text":5}]})",
       "result.content[0].text: expected a string, got integer"},
      {R"({"content":[],"isError":"yes"})", "result.isError: expected a boolean, got string"},
      {R"({"content":[{"type":"resource","resource":"x"}]})",
       "result.content[0]: \"resource\" must be an object"},
  };
  for (const auto& [text, expected] : cases) {
    auto r = read_call_result(Json::parse(text), "result");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.message(), expected) << text;
  }
}

}  // namespace
}  // namespace mecha::mcp
