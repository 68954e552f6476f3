#include "config/yaml_limits.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <limits>
#include <sstream>
#include <vector>

namespace mecha::config {
namespace {

// Thrown by the handler to stop the parser at the first limit passed; caught below, never
// out of this file.
struct YamlLimitPassed {
  int line;  // 0-based in the YAML, as yaml-cpp marks are
  std::string what;
};

// Counts the nodes the events describe, each alias as the nodes of the anchor it names.
class YamlNodeCounter final : public YAML::EventHandler {
 public:
  YamlNodeCounter(const YamlLimits& limits, std::string_view what) : limits_(limits), what_(what) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= sizes_.size() || sizes_[anchor] == kOpen) {
      throw YamlLimitPassed{mark.line,
                            fmt::format("an alias in {} names a node it is inside, which "
                                        "would repeat without end",
                                        what_)};
    }
    add(mark, sizes_[anchor]);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  static constexpr size_t kOpen = std::numeric_limits<size_t>::max();

  struct Frame {
    YAML::anchor_t anchor;
    size_t nodes_before;  // nodes_ when the collection began
  };

  void add(const YAML::Mark& mark, size_t n) {
    // nodes_ never passes max_nodes and n (a finished anchor's count) is at most nodes_, so
    // the sum cannot wrap.
    nodes_ += n;
    if (nodes_ > limits_.max_nodes) {
      throw YamlLimitPassed{mark.line,
                            fmt::format("{} has more than the limit of {} nodes, counting "
                                        "each alias as the nodes it repeats",
                                        what_, limits_.max_nodes)};
    }
  }
  void remember(YAML::anchor_t anchor, size_t size) {
    if (anchor == YAML::NullAnchor) return;
    if (anchor >= sizes_.size()) sizes_.resize(anchor + 1, kOpen);
    sizes_[anchor] = size;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    remember(anchor, 1);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(open_.size()) >= limits_.max_depth) {
      throw YamlLimitPassed{mark.line, fmt::format("{} nests deeper than the limit of {} levels",
                                                   what_, limits_.max_depth)};
    }
    open_.push_back(Frame{anchor, nodes_});
    add(mark, 1);
    // Named but unfinished: an alias to it from inside is a cycle.
    remember(anchor, kOpen);
  }
  void close() {
    if (open_.empty()) return;
    const Frame f = open_.back();
    open_.pop_back();
    remember(f.anchor, nodes_ - f.nodes_before);
  }

  const YamlLimits& limits_;
  std::string_view what_;
  size_t nodes_ = 0;
  std::vector<Frame> open_;
  std::vector<size_t> sizes_;  // by anchor id: the nodes it stands for, kOpen while open
};

}  // namespace

Status check_yaml_limits(std::string_view yaml, const std::string& file, int first_line,
                         std::string_view what, const YamlLimits& limits) {
  if (yaml.size() > limits.max_bytes) {
    return Status::error(fmt::format("{}:{}: {} is {} bytes, more than the limit of {}", file,
                                     first_line, what, yaml.size(), limits.max_bytes));
  }
  std::istringstream in{std::string(yaml)};
  YamlNodeCounter counter(limits, what);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(counter);
  } catch (const YamlLimitPassed& e) {
    return Status::error(fmt::format("{}:{}: {}", file, first_line + e.line, e.what));
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? first_line + e.mark.line : 0;
    return Status::error(fmt::format("{}:{}: bad YAML in {}: {}", file, line, what, e.msg));
  }
  return ok_status();
}

}  // namespace mecha::config
