// End-to-end runs of build/mecha-e2e on a cassette written by the test: the lines of the
// cassette, and a fixture that runs it in a fresh work tree and reads what happened there.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli::testing {

// A cassette line (newline included, so lines join with +) whose response calls one tool.
std::string tool_line(const std::string& agent, const std::string& id, const std::string& name,
                      const Json& input);
// A cassette line whose response is text and ends the turn.
std::string text_line(const std::string& agent, const std::string& text);

// The events of `all` whose "type" is `type`.
std::vector<Json> of_type(const std::vector<Json>& all, const std::string& type);
// The content of the tool_result event for call `id`, or "<no result for ID>".
std::string result_of(const std::vector<Json>& events, const std::string& id);

class CassetteRunTest : public ::testing::Test {
 protected:
  // `prompt` is the user's task in every run().
  explicit CassetteRunTest(std::string prompt) : prompt_(std::move(prompt)) {}

  // build/mecha-e2e with `args` in the work tree.
  BinaryResult mecha(const std::vector<std::string>& args);
  // `mecha run --json` on a cassette of `lines` (with `extra` arguments), as a new session;
  // the events it printed. A run that does not exit 0 fails the test.
  std::vector<Json> run(const std::string& lines, std::vector<std::string> extra = {});
  // What SendMessage recorded on the host: one input per call that really ran.
  std::vector<Json> sent() const;

  TempDir dir_;
  // The --permission-mode of run(). These tests are about something else (the guard, the
  // sandbox, taint, the interlock), all of which hold in every mode, so they run under
  // bypassPermissions, where nothing asks; a test of permissions sets its own ("" for the
  // config's mode).
  std::string permission_mode_ = "bypassPermissions";

 private:
  std::string prompt_;
};

}  // namespace mecha::cli::testing
