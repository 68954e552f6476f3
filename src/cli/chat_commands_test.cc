#include "cli/chat_commands.h"

#include <gtest/gtest.h>

namespace mecha::cli {
namespace {

TEST(ChatCommands, ParsesEachCommandAndItsArgument) {
  EXPECT_EQ(parse_chat_command("/help").kind, ChatCommand::kHelp);
  EXPECT_EQ(parse_chat_command("/sessions").kind, ChatCommand::kSessions);
  EXPECT_EQ(parse_chat_command("/resume").arg, "last");
  auto r = parse_chat_command("/resume  2026-abc ");
  EXPECT_EQ(r.kind, ChatCommand::kResume);
  EXPECT_EQ(r.arg, "2026-abc");
  EXPECT_EQ(parse_chat_command("/cost").kind, ChatCommand::kCost);
  auto m = parse_chat_command("/model cassette:x.jsonl");
  EXPECT_EQ(m.kind, ChatCommand::kModel);
  EXPECT_EQ(m.arg, "cassette:x.jsonl");
  EXPECT_EQ(parse_chat_command("/model").arg, "");
  EXPECT_EQ(parse_chat_command("/clear").kind, ChatCommand::kClear);
  auto c = parse_chat_command("/compact keep the file list ");
  EXPECT_EQ(c.kind, ChatCommand::kCompact);
  EXPECT_EQ(c.arg, "keep the file list");
  EXPECT_EQ(parse_chat_command("/compact").arg, "");
  EXPECT_EQ(parse_chat_command("/quit").kind, ChatCommand::kQuit);
  EXPECT_EQ(parse_chat_command("/exit").kind, ChatCommand::kQuit);
}

TEST(ChatCommands, AnUnknownCommandKeepsItsName) {
  auto c = parse_chat_command("/frobnicate now");
  EXPECT_EQ(c.kind, ChatCommand::kUnknown);
  EXPECT_EQ(c.arg, "/frobnicate");
  EXPECT_EQ(parse_chat_command("/quitnow").kind, ChatCommand::kUnknown);
}

TEST(ChatCommands, HelpListsEveryCommand) {
  for (const char* c : {"/help", "/sessions", "/resume", "/cost", "/model", "/clear", "/compact",
                        "/quit", "/exit"}) {
    EXPECT_NE(chat_help().find(c), std::string::npos) << c;
  }
}

}  // namespace
}  // namespace mecha::cli
