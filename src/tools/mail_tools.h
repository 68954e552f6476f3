// ReadInbox and ReadMessage: the user's mail, read from a Maildir ([mail] maildir).
//
// ReadInbox {limit?, unread_only?} lists messages newest first (id, date, from, subject,
// unread); ReadMessage {id} shows one message's headers and the text of its body
// (tools/mail_parse.h). Neither changes the mailbox: reading does not mark mail read.
//
// Mail is the user's private data, written by anyone who can send them mail: both tools are
// private_data and untrusted_input, and their results are external. They never touch the
// work tree. Offered only when [mail] maildir is set; a subagent gets them only when its
// definition names them (agent/agent_catalog.cc).
#pragma once

#include "tools/maildir.h"
#include "tools/tool.h"

namespace mecha::tools {

class ReadInboxTool final : public Tool {
 public:
  static constexpr int kDefaultLimit = 20;
  static constexpr int kMaxLimit = 200;

  explicit ReadInboxTool(std::filesystem::path maildir) : maildir_(std::move(maildir)) {}
  std::string name() const override { return "ReadInbox"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override {
    return {.untrusted_input = true, .private_data = true};
  }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  Maildir maildir_;
};

class ReadMessageTool final : public Tool {
 public:
  explicit ReadMessageTool(std::filesystem::path maildir) : maildir_(std::move(maildir)) {}
  std::string name() const override { return "ReadMessage"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override {
    return {.untrusted_input = true, .private_data = true};
  }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  Maildir maildir_;
};

}  // namespace mecha::tools
