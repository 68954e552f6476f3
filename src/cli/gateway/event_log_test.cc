#include "cli/gateway/event_log.h"

#include <gtest/gtest.h>

#include <thread>

namespace mecha::gateway {
namespace {

using std::chrono::milliseconds;

TEST(EventLog, AReaderGetsWhatCameAfterTheNumberItLastSaw) {
  EventLog log;
  EXPECT_EQ(log.append(Json{{"type", "a"}}), 1);
  EXPECT_EQ(log.append(Json{{"type", "b"}}), 2);
  auto all = log.after(0, milliseconds(0));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].seq, 2);
  EXPECT_EQ(all[1].data, R"({"type":"b"})");
  auto rest = log.after(1, milliseconds(0));
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].seq, 2);
  EXPECT_TRUE(log.after(2, milliseconds(0)).empty());
}

TEST(EventLog, AWaitingReaderWakesWhenAnEventArrivesOrTheLogCloses) {
  EventLog log;
  std::thread writer([&] {
    // So that the reader is most likely waiting already (nothing shows it); an event that
    // came first would pass too, so the time cannot make the test fail.
    std::this_thread::sleep_for(milliseconds(50));
    log.append(Json{{"type", "late"}});
  });
  auto got = log.after(0, std::chrono::seconds(10));
  writer.join();
  ASSERT_EQ(got.size(), 1u);
  std::thread closer([&] {
    // As above: most likely while the reader waits.
    std::this_thread::sleep_for(milliseconds(50));
    log.close();
  });
  EXPECT_TRUE(log.after(1, std::chrono::seconds(10)).empty());
  closer.join();
  EXPECT_TRUE(log.closed());
}

TEST(EventLog, PastItsBoundTheOldestGoAndALateReaderIsToldHowManyItMissed) {
  EventLog log(100);
  for (int i = 0; i < 20; ++i) log.append(Json{{"type", "e"}, {"i", i}});
  auto got = log.after(0, milliseconds(0));
  ASSERT_GE(got.size(), 2u);
  EXPECT_NE(got[0].data.find("\"truncated\""), std::string::npos) << got[0].data;
  EXPECT_EQ(got.back().seq, 20);
  size_t bytes = 0;
  for (size_t i = 1; i < got.size(); ++i) bytes += got[i].data.size();
  EXPECT_LE(bytes, 100u);
}

}  // namespace
}  // namespace mecha::gateway
