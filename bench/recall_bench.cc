// Recall over 100,000 notes (issue 17's target: under 5 ms per Recall): the RecallTool's whole
// call (tokenizing the query, the FTS5 search ranked by bm25, reading and formatting the
// hits), for a few typical queries, with the median and p99 of each.
//
//   cmake -B build -DMECHA_BENCH=ON && ninja -C build recall_bench && ./build/bench/recall_bench
//
// The notes are 20 to 60 words drawn from a Zipf-like vocabulary of 20,000 words (function
// words in most notes, "dentist" in a few hundred), with up to three of 40 tags; every 50th
// note is tainted. The store is filled once, in one transaction, in a temp dir removed at exit.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "store/note_store.h"
#include "store/sqlite.h"
#include "tools/memory_tools.h"

namespace mecha::tools {
namespace {

constexpr int kNotes = 100000;

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::abort();
  }
}

// The words of the vocabulary by rank: English function words first, then the words notes
// are about spread from rank 100 to about 4,000 (as in real text, where "dentist" is far
// rarer than "the"), the rest made up.
const char* const kFunctionWords[] = {"the", "a",  "to",   "and",  "of", "in",  "for", "is",
                                      "on",  "it", "with", "that", "at", "was", "be",  "this"};
const char* const kSubjectWords[] = {
    "meeting", "project",  "report",    "email",   "call",        "password", "wifi",    "office",
    "home",    "friday",   "monday",    "lunch",   "dinner",      "deadline", "review",  "budget",
    "client",  "invoice",  "doctor",    "dentist", "appointment", "birthday", "gift",    "flight",
    "hotel",   "train",    "ticket",    "book",    "server",      "deploy",   "release", "bug",
    "test",    "database", "backup",    "key",     "address",     "phone",    "number",  "account",
    "bank",    "car",      "insurance", "rent",    "garden",      "recipe",   "pizza",   "coffee",
    "team",    "manager",  "plan",      "idea",    "when",        "what",     "where",   "my"};

std::string word_of_rank(int r) {
  if (r < static_cast<int>(std::size(kFunctionWords))) return kFunctionWords[r];
  if (r >= 100 && (r - 100) % 70 == 0 &&
      (r - 100) / 70 < static_cast<int>(std::size(kSubjectWords))) {
    return kSubjectWords[(r - 100) / 70];
  }
  return fmt::format("w{}x", r);
}

// The store, filled once for every benchmark.
struct Corpus {
  TempDir dir;
  std::filesystem::path file;
  std::shared_ptr<NoteStoreHandle> notes;

  Corpus() : file(dir.path / "notes.db") {
    auto store = store::NoteStore::open(file);
    check(store.status());
    store->reset();
    auto db = store::Database::open(file, 10000);
    check(db.status());
    check(db->exec("PRAGMA synchronous=OFF"));
    auto tx = store::Transaction::begin(*db);
    check(tx.status());
    auto ins = db->prepare(
        "INSERT INTO notes(created, text, tags, tainted, session) VALUES(?, ?, ?, ?, '')");
    check(ins.status());
    std::mt19937 rng(17);
    // Zipf-like: word rank r drawn with weight 1/(r+1); the first ranks are everyday words.
    constexpr int kVocabulary = 20000;
    std::vector<double> weights(kVocabulary);
    for (int r = 0; r < kVocabulary; ++r) weights[r] = 1.0 / (r + 1);
    std::discrete_distribution<int> word(weights.begin(), weights.end());
    std::uniform_int_distribution<int> length(20, 60);
    std::uniform_int_distribution<int> tag_count(0, 3);
    std::uniform_int_distribution<int> tag(0, 39);
    for (int n = 0; n < kNotes; ++n) {
      std::string text;
      for (int w = length(rng); w > 0; --w) {
        text += (text.empty() ? "" : " ") + word_of_rank(word(rng));
      }
      std::string tags;
      for (int t = tag_count(rng); t > 0; --t) {
        tags += (tags.empty() ? "" : "\n") + fmt::format("tag{}", tag(rng));
      }
      ins->bind(1, std::string_view("2026-12-01T04:00:00.000Z"));
      ins->bind(2, text);
      ins->bind(3, tags);
      ins->bind(4, int64_t{n % 50 == 0 ? 1 : 0});
      check(ins->run());
    }
    check(tx->commit());
    check(db->exec("INSERT INTO notes_fts(notes_fts) VALUES('optimize')"));
    notes = std::make_shared<NoteStoreHandle>(file);
  }
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

void BM_Recall(benchmark::State& state, const char* query) {
  RecallTool recall(corpus().notes);
  ToolContext ctx;
  const Json input = {{"query", query}};
  ToolOutput first = recall.call(input, ctx);  // opens the store, warms the cache
  if (first.is_error) {
    state.SkipWithError(first.content.c_str());
    return;
  }
  std::vector<double> us;
  size_t bytes = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    ToolOutput out = recall.call(input, ctx);
    auto t1 = std::chrono::steady_clock::now();
    bytes = out.content.size();
    benchmark::DoNotOptimize(out);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  state.counters["median_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["result_bytes"] = static_cast<double>(bytes);
}

// Two rare-ish words together; one everyday word; a sentence as a model would write it; a
// tag; a word no note holds.
BENCHMARK_CAPTURE(BM_Recall, two_words, "wifi password")
    ->Iterations(300)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Recall, one_word, "dentist")->Iterations(300)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Recall, sentence, "when is the dentist appointment for the team")
    ->Iterations(300)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Recall, tag, "tag7")->Iterations(300)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Recall, no_hit, "submarine")->Iterations(300)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mecha::tools

BENCHMARK_MAIN();
