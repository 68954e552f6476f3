// The least any client can do for one durable model turn: the yardstick turn_overhead_bench
// sets beside mecha's N=0 run. It appends the prompt to a journal file and fdatasyncs it,
// POSTs one streamed Messages request on a new loopback connection, reads the stream until
// its message_stop event, appends what it read and fdatasyncs again. No config, no JSON, no
// store, no threads: what is left is the process, the two syncs and the model's answer.
//
// Usage: one_turn_floor PORT JOURNAL
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

bool append_and_sync(int fd, const std::string& text) {
  return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
         fdatasync(fd) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: one_turn_floor PORT JOURNAL\n");
    return 2;
  }
  const int journal = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (journal < 0 || !append_and_sync(journal, "user: do the task\n")) {
    std::perror(argv[2]);
    return 1;
  }
  const std::string body = R"({"model":"mock-model","max_tokens":1024,"stream":true,)"
                           R"("messages":[{"role":"user","content":"do the task"}]})";
  const std::string request =
      "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nx-api-key: dummy\r\n"
      "anthropic-version: 2023-06-01\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      write(s, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    std::perror("the model");
    return 1;
  }
  std::string reply;
  char buf[16384];
  while (reply.find("message_stop") == std::string::npos) {
    const ssize_t n = read(s, buf, sizeof buf);
    if (n <= 0) {
      std::fprintf(stderr, "the model closed before message_stop\n");
      return 1;
    }
    reply.append(buf, static_cast<size_t>(n));
  }
  close(s);
  if (!append_and_sync(journal, "assistant: " + reply + "\n")) {
    std::perror(argv[2]);
    return 1;
  }
  return 0;
}
