#include "wire/frame_reader.h"

#include <gtest/gtest.h>

namespace mecha::wire {
namespace {

std::vector<std::string> drain(FrameReader& r) {
  std::vector<std::string> out;
  while (auto line = r.next()) {
    out.push_back(line->oversize ? "<oversize " + std::to_string(line->size) + ">" : line->text);
  }
  return out;
}

TEST(FrameReader, JoinsLinesThatArriveOneByteAtATime) {
  FrameReader r(100);
  std::string stream = "{\"a\":1}\n{\"b\":2}\n";
  std::vector<std::string> got;
  for (char c : stream) {
    r.feed(std::string_view(&c, 1));
    for (auto& l : drain(r)) got.push_back(l);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_FALSE(r.partial());
}

TEST(FrameReader, SplitsSeveralLinesInOneReadAndKeepsTheUnfinishedOne) {
  FrameReader r(100);
  r.feed("one\n\ntwo\nthr");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(r.partial());
  r.feed("ee\n");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"three"}));
  EXPECT_FALSE(r.partial());
}

TEST(FrameReader, ReportsAnOversizeLineOnceAndGoesOnAtTheNextLine) {
  FrameReader r(4);
  r.feed("12345678\nok\n");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"<oversize 8>", "ok"}));
}

TEST(FrameReader, DropsAnOversizeLineAsItArrivesWithoutBufferingIt) {
  FrameReader r(4);
  r.feed("123456");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"<oversize 6>"}));
  r.feed(std::string(1000, 'x'));
  EXPECT_EQ(drain(r), (std::vector<std::string>{}));
  EXPECT_TRUE(r.partial());
  r.feed("xx\nnext\n");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"next"}));
  EXPECT_FALSE(r.partial());
}

TEST(FrameReader, ALineOfExactlyTheLimitIsKept) {
  FrameReader r(4);
  r.feed("1234\n");
  EXPECT_EQ(drain(r), (std::vector<std::string>{"1234"}));
}

}  // namespace
}  // namespace mecha::wire
