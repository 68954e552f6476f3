// Remember and Recall: notes a run keeps for later runs, in the user's note store
// (store/note_store.h), offered when [memory] enabled (Default: true).
//
//   Remember {text, tags?}  -> "remembered as note 12"
//   Recall   {query, limit?} -> the best notes for the query (limit 1..50, Default: 5)
//
// Labels (DESIGN.md, security model 1, "taint follows data"):
//   - Remember returns only an id: no capabilities. It stores the note `tainted` when the run
//     holds untrusted content now (ToolContext::untrusted), and says so in its result: an
//     attacker's page may have asked for the note, and a later run must not trust it.
//   - Recall returns the user's notes: private_data. Its result is external (so untrusted)
//     exactly when a hit is tainted: clean notes are private, not untrusted; a tainted hit
//     makes the result both, and the loop keeps the stricter label.
// Neither touches the work tree (TreeAccess::kNone). The store is opened on the first call,
// so a run that never remembers nor recalls creates no file.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "base/result.h"
#include "store/note_store.h"
#include "tools/tool.h"

namespace mecha::tools {

// The file of the note store: [memory] file (a leading "~/" is $HOME), else notes.db in the
// state directory (made private). `mecha memory` opens the same.
Result<std::filesystem::path> note_store_path(const std::optional<std::filesystem::path>& file);

// The note store of note_store_path(file), opened once, on first use. Thread-safe; shared by
// Remember and Recall.
class NoteStoreHandle {
 public:
  explicit NoteStoreHandle(std::optional<std::filesystem::path> file) : file_(std::move(file)) {}
  // The open store, or why it cannot be opened (tried again on the next call).
  Result<store::NoteStore*> get();

 private:
  std::mutex mu_;
  const std::optional<std::filesystem::path> file_;
  std::unique_ptr<store::NoteStore> store_;  // GUARDED_BY(mu_)
};

class RememberTool final : public Tool {
 public:
  explicit RememberTool(std::shared_ptr<NoteStoreHandle> notes) : notes_(std::move(notes)) {}
  std::string name() const override { return "Remember"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return false; }
  Capabilities capabilities() const override { return {}; }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  std::shared_ptr<NoteStoreHandle> notes_;
};

class RecallTool final : public Tool {
 public:
  static constexpr int kDefaultLimit = 5;
  static constexpr int kMaxLimit = 50;
  // Hits past this much text are left out, with a line saying how many.
  static constexpr size_t kMaxContentBytes = 128 * 1024;

  explicit RecallTool(std::shared_ptr<NoteStoreHandle> notes) : notes_(std::move(notes)) {}
  std::string name() const override { return "Recall"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override {
    return {.untrusted_input = true, .private_data = true};
  }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  std::shared_ptr<NoteStoreHandle> notes_;
};

}  // namespace mecha::tools
