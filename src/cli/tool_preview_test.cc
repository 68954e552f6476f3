#include "cli/tool_preview.h"

#include <gtest/gtest.h>

namespace mecha::cli {
namespace {

// A person is asked about the whole command: its newlines shown, never cut to a width.
TEST(ToolPreview, ApprovalSubjectIsTheWholeCommandOnOneLine) {
  EXPECT_EQ(approval_subject(Json{{"command", "ls\n\n\nrm -rf ~"}}), "ls\\n\\n\\nrm -rf ~");
  EXPECT_EQ(approval_subject(Json{{"file_path", "/w/a.txt"}}), "/w/a.txt");
  EXPECT_EQ(approval_subject(Json{{"to", "bob@example.org"}, {"subject", "hi"}}, 20),
            "{\"subject\":\"hi\",\"to\"…");
}

TEST(ToolPreview, HeadPreviewShowsTheFirstLinesAndCountsTheRest) {
  EXPECT_EQ(head_preview("a\nb\nc\n", "  ⎿ ", "    ", 2), "  ⎿ a\n    b\n    … 1 more line\n");
  EXPECT_EQ(head_preview("", "  ⎿ ", "    ", 2), "  ⎿ (no output)\n");
}

}  // namespace
}  // namespace mecha::cli
