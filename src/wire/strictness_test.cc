// Every fixture of tests/fixtures/wire decodes, and every mutant of every fixture is refused:
// an unknown key added at every depth of every object, each required field removed in turn,
// each field given a value of each wrong type. The expected message is computed from the
// mutated path, so each refusal is checked to name the right field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "wire/codec.h"

namespace mecha::wire {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(MECHA_SOURCE_DIR) / "tests/fixtures/wire";

// Fields whose value is the tool's own free-form input: their content is not the wire's,
// so only their own type is checked (they must be objects).
const std::set<std::string> kOpaque = {"tool_call/body/input", "approval_request/body/input"};
// Fields with a declared default (frames.h): removing them is allowed.
const std::set<std::string> kOptional = {"open/body/session_id", "approval_answer/body/always"};

struct Fixture {
  std::string name;
  Json json;
};

std::vector<Fixture> load_fixtures() {
  std::vector<Fixture> out;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back({entry.path().stem().string(), Json::parse(text.str())});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

using Path = std::vector<std::variant<std::string, size_t>>;

// The `where` a decoder names for a path: "frame", "frame.kind", then "<kind>.a.b[0].c".
// The body is "frame.body" as a field of the envelope, and "<kind>" as an object.
std::string where_of(const std::string& kind, const Path& path, bool as_field = false) {
  if (path.empty()) return "frame";
  if (std::get<std::string>(path[0]) == "kind") return "frame.kind";
  if (as_field && path.size() == 1) return "frame.body";
  std::string out = kind;
  for (size_t i = 1; i < path.size(); ++i) {
    if (const auto* key = std::get_if<std::string>(&path[i])) {
      out += "." + *key;
    } else {
      out += "[" + std::to_string(std::get<size_t>(path[i])) + "]";
    }
  }
  return out;
}

// "tool_call/body/input", for the tables above.
std::string slash_path(const std::string& kind, const Path& path) {
  std::string out = kind;
  for (const auto& p : path) {
    if (const auto* key = std::get_if<std::string>(&p)) {
      out += "/" + *key;
    } else {
      out += "/" + std::to_string(std::get<size_t>(p));
    }
  }
  return out;
}

Json& at(Json& root, const Path& path) {
  Json* j = &root;
  for (const auto& p : path) {
    if (const auto* key = std::get_if<std::string>(&p)) {
      j = &(*j)[*key];
    } else {
      j = &(*j)[std::get<size_t>(p)];
    }
  }
  return *j;
}

// Values of every JSON type but the original's. An integer is also a number, so a number
// field is not given an integer; an integer field is given a fraction.
std::vector<Json> wrong_values(const Json& original) {
  std::vector<Json> all = {Json(7),    Json(1.5),     Json("x"),
                           Json(true), Json::array(), Json::object()};
  std::vector<Json> out;
  for (const Json& v : all) {
    if (json_type_name(v) == json_type_name(original)) continue;
    if (original.is_number_float() && v.is_number()) continue;
    if (original.is_null() && v.is_number()) continue;  // cost_usd: a number or null
    out.push_back(v);
  }
  return out;
}

struct Mutant {
  std::string what;
  std::string line;
  std::string expected_message;  // exact, or a prefix when expected_suffix is set
  std::string expected_suffix;
};

std::vector<Mutant> mutants_of(const Fixture& f) {
  const std::string kind = f.json["kind"].get<std::string>();
  std::vector<Mutant> out;
  std::function<void(const Path&)> walk = [&](const Path& path) {
    Json original = at(const_cast<Json&>(f.json), path);
    const std::string here = slash_path(kind, path);
    if (!path.empty()) {
      for (const Json& v : wrong_values(original)) {
        Json m = f.json;
        at(m, path) = v;
        out.push_back({here + " := " + v.dump(), m.dump(),
                       where_of(kind, path, true) + ": expected ", ", got " + json_type_name(v)});
      }
    }
    if (kOpaque.count(here)) return;
    if (original.is_object()) {
      Json m = f.json;
      at(m, path)["zz_unknown"] = 1;
      out.push_back({here + " + zz_unknown", m.dump(),
                     where_of(kind, path) + ": unknown field \"zz_unknown\"", ""});
      for (const auto& [key, _] : original.items()) {
        Path child = path;
        child.emplace_back(key);
        if (!kOptional.count(slash_path(kind, child))) {
          Json r = f.json;
          at(r, path).erase(key);
          out.push_back({here + " - " + key, r.dump(),
                         where_of(kind, path) + ": missing field \"" + key + "\"", ""});
        }
        walk(child);
      }
    } else if (original.is_array()) {
      for (size_t i = 0; i < original.size(); ++i) {
        Path child = path;
        child.emplace_back(i);
        walk(child);
      }
    }
  };
  walk({});
  return out;
}

TEST(WireFixtures, EveryKindHasOneAndEachDecodesAndReencodesTheSame) {
  std::set<std::string> kinds_seen;
  for (const Fixture& f : load_fixtures()) {
    SCOPED_TRACE(f.name);
    Decoded d = decode_frame(f.json.dump());
    ASSERT_TRUE(d.ok()) << d.error.message;
    EXPECT_EQ(kind_of(*d.frame), f.json["kind"].get<std::string>());
    EXPECT_EQ(frame_to_json(*d.frame), f.json);
    kinds_seen.insert(std::string(kind_of(*d.frame)));
  }
  std::set<std::string> all;
  for (auto k : frame_kinds()) all.insert(std::string(k));
  EXPECT_EQ(kinds_seen, all);
  EXPECT_TRUE(fs::exists(kFixtures / "turn_done_untrusted.json"));
}

TEST(WireStrictness, EveryMutantOfEveryFixtureIsRefusedNamingTheField) {
  size_t count = 0;
  for (const Fixture& f : load_fixtures()) {
    for (const Mutant& m : mutants_of(f)) {
      ++count;
      SCOPED_TRACE(f.name + ": " + m.what);
      Decoded d = decode_frame(m.line);
      ASSERT_FALSE(d.ok()) << "accepted: " << m.line;
      EXPECT_EQ(d.error.code, "bad_frame");
      if (m.expected_suffix.empty()) {
        EXPECT_EQ(d.error.message, m.expected_message);
      } else {
        EXPECT_TRUE(d.error.message.starts_with(m.expected_message) &&
                    d.error.message.ends_with(m.expected_suffix))
            << d.error.message << "\nwanted " << m.expected_message << "..." << m.expected_suffix;
      }
    }
  }
  // 21 fixtures, each with at least an unknown key at two depths, two removals, and the
  // wrong types of two envelope fields.
  EXPECT_GT(count, 21u * 14);
}

TEST(WireStrictness, OptionalFieldsMayBeLeftOutAndTakeTheirDefault) {
  Decoded d = decode_frame(R"({"kind":"open","body":{}})");
  ASSERT_TRUE(d.ok()) << d.error.message;
  EXPECT_EQ(std::get<Open>(*d.frame), Open{});
  // A client of protocol 2 answers without "always": a one-time answer.
  d = decode_frame(R"({"kind":"approval_answer","body":{"request_id":"r1","approved":true}})");
  ASSERT_TRUE(d.ok()) << d.error.message;
  EXPECT_EQ(std::get<ApprovalAnswer>(*d.frame), (ApprovalAnswer{"r1", true, false}));
}

TEST(WireStrictness, OpaqueToolInputAcceptsAnyKeys) {
  Decoded d = decode_frame(R"({"kind":"tool_call","body":{"agent":"main","id":"t1","name":"Grep",)"
                           R"("input":{"anything":{"goes":[1,{"here":true}]}}}})");
  ASSERT_TRUE(d.ok()) << d.error.message;
}

}  // namespace
}  // namespace mecha::wire
