#include "tools/mcp/jsonrpc.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace mecha::mcp {
namespace {

TEST(JsonRpcTest, ReadsTheFourShapes) {
  auto request = parse_message(R"({"jsonrpc":"2.0","id":"a1","method":"roots/list"})", "m");
  ASSERT_TRUE(request.ok()) << request.message();
  EXPECT_EQ(request->kind, RpcMessage::Kind::kRequest);
  EXPECT_EQ(request->id, "a1");
  EXPECT_EQ(request->method, "roots/list");
  EXPECT_TRUE(request->params.is_null());

  auto note = parse_message(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})", "m");
  ASSERT_TRUE(note.ok()) << note.message();
  EXPECT_EQ(note->kind, RpcMessage::Kind::kNotification);
  EXPECT_EQ(note->params, Json::parse(R"({"progress":1})"));

  auto response = parse_message(R"({"jsonrpc":"2.0","id":7,"result":{"tools":[]}})", "m");
  ASSERT_TRUE(response.ok()) << response.message();
  EXPECT_EQ(response->kind, RpcMessage::Kind::kResponse);
  EXPECT_EQ(response->id, 7);
  EXPECT_EQ(response->result, Json::parse(R"({"tools":[]})"));

  auto error = parse_message(
      R"({"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"bad","data":{"x":1}}})", "m");
  ASSERT_TRUE(error.ok()) << error.message();
  EXPECT_EQ(error->kind, RpcMessage::Kind::kError);
  EXPECT_EQ(error->error_code, -32602);
  EXPECT_EQ(error->error_message, "bad");
  EXPECT_EQ(error->error_data, Json::parse(R"({"x":1})"));
}

TEST(JsonRpcTest, RefusesWhatIsNotOneMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json",
       "m: invalid JSON at byte 2: syntax error while parsing value - invalid literal; last read: "
       "'no'"},
      {"[]", "m: a JSON-RPC batch (array) is not allowed in MCP"},
      {"42", "m: expected an object, got integer"},
      {R"({"id":1,"result":{}})", "m: missing field \"jsonrpc\""},
      {R"({"jsonrpc":"1.0","id":1,"result":{}})", "m: \"jsonrpc\" must be \"2.0\", not \"1.0\""},
      {R"({"jsonrpc":"2.0","id":1.5,"result":{}})",
       "m: \"id\" must be a string or an integer, not number"},
      {R"({"jsonrpc":"2.0","id":[1],"result":{}})",
       "m: \"id\" must be a string or an integer, not array"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})",
       "m: a response cannot carry both \"result\" and \"error\""},
      {R"({"jsonrpc":"2.0","id":1,"method":"x","result":{}})",
       "m: a message with \"method\" cannot carry \"result\" or \"error\""},
      {R"({"jsonrpc":"2.0","result":{}})", "m: a response without an id"},
      {R"({"jsonrpc":"2.0","id":1,"result":[]})", "m: \"result\" must be an object, not array"},
      {R"({"jsonrpc":"2.0","method":"x","params":[1]})",
       "m: \"params\" must be an object, not array"},
      {R"({"jsonrpc":"2.0","method":7})", "m.method: expected a string, got integer"},
      {R"({"jsonrpc":"2.0","id":1})",
       "m: neither a request, a notification nor a response (no \"method\", \"result\" or "
       "\"error\")"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}})",
       "m.error.code: expected an integer, got string"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"extra":1})", "m: unknown field \"extra\""},
  };
  for (const auto& [text, expected] : cases) {
    auto parsed = parse_message(text, "m");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.message(), expected) << text;
  }
}

TEST(JsonRpcTest, RefusesAMessageOverTheSizeLimitBeforeParsingIt) {
  std::string huge = R"({"jsonrpc":"2.0","method":"x","params":{"s":")" +
                     std::string(kMaxMessageBytes, 'a') + "\"}}";
  auto parsed = parse_message(huge, "m");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.message(), fmt::format("m: a message of {} bytes is over the limit of {} bytes",
                                          huge.size(), kMaxMessageBytes));
}

TEST(JsonRpcTest, RefusesNestingPastTheDepthLimit) {
  std::string deep = R"({"jsonrpc":"2.0","method":"x","params":{"a":)" + std::string(200, '[') +
                     std::string(200, ']') + "}}";
  auto parsed = parse_message(deep, "m");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.message(), "m: JSON nested deeper than the limit of 128 levels");
}

TEST(JsonRpcTest, MutatedMessagesNeverCrashTheReader) {
  const std::vector<std::string> seeds = {
      R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}})",
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3}})",
      R"({"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m","data":[1,{"a":null}]}})",
  };
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1103515245u + 12345u;
    return state >> 8;
  };
  const std::string alphabet = "{}[]\":,0-1.e\\ntuflaxsr\x00\xff\xc3 ";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string m = seeds[next() % seeds.size()];
    for (int k = 1 + next() % 4; k > 0; --k) {
      size_t at = next() % (m.size() + 1);
      switch (next() % 3) {
        case 0:
          if (at < m.size()) m.erase(at, 1);
          break;
        case 1:
          m.insert(at, 1, alphabet[next() % alphabet.size()]);
          break;
        default:
          if (at < m.size()) m[at] = alphabet[next() % alphabet.size()];
      }
    }
    auto parsed = parse_message(m, "m");
    if (parsed.ok()) {
      ++accepted;
      // What is accepted is one of the four shapes, whole.
      EXPECT_TRUE(parsed->kind != RpcMessage::Kind::kResponse || parsed->result.is_object()) << m;
    } else {
      EXPECT_EQ(parsed.message().rfind("m", 0), 0u) << m;
    }
  }
  EXPECT_GT(accepted, 0);
}

TEST(JsonRpcTest, EncodesOneLineEach) {
  EXPECT_EQ(encode_request(3, "tools/list", Json::object()),
            R"({"id":3,"jsonrpc":"2.0","method":"tools/list","params":{}})");
  EXPECT_EQ(encode_notification("notifications/initialized", Json()),
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(encode_result("s1", Json::object()), R"({"id":"s1","jsonrpc":"2.0","result":{}})");
  EXPECT_EQ(encode_error(4, kMethodNotFound, "no\nway"),
            R"({"error":{"code":-32601,"message":"no\nway"},"id":4,"jsonrpc":"2.0"})");
  // Text from outside that is not UTF-8 is repaired, never thrown on.
  EXPECT_EQ(encode_error(4, kInternalError, std::string("bad \xff byte")),
            "{\"error\":{\"code\":-32603,\"message\":\"bad \xEF\xBF\xBD byte\"},\"id\":4,"
            "\"jsonrpc\":\"2.0\"}");
}

}  // namespace
}  // namespace mecha::mcp
