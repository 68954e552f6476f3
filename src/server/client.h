// Client: the client's end of the wire: connect, say hello, then frames both ways.
//
// Owned by one thread for receiving; send() is thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "server/frame_channel.h"

namespace mecha::server {

class Client {
 public:
  // Connects to the daemon at `path` and exchanges hello. A refusal (another uid, a version
  // mismatch) is an error with the daemon's message.
  static Result<std::unique_ptr<Client>> connect(const std::filesystem::path& path,
                                                 const std::string& software,
                                                 int64_t protocol_version = wire::kProtocolVersion);
  // The same over a socket already connected (an in-process daemon).
  static Result<std::unique_ptr<Client>> over(UniqueFd fd, const std::string& software,
                                              int64_t protocol_version = wire::kProtocolVersion);

  Status send(const wire::Frame& frame) { return channel_.send(frame); }
  // The next frame; an error frame for a line that did not decode; nullopt once closed.
  std::optional<wire::Decoded> receive() { return channel_.receive(); }

  // Sends open and waits for opened; an error frame in reply is an error with its message.
  Result<wire::Opened> open(const std::string& session_id);

  const wire::Hello& daemon_hello() const { return hello_; }
  void shutdown() { channel_.shutdown(); }

 private:
  explicit Client(UniqueFd fd) : channel_(std::move(fd)) {}
  FrameChannel channel_;
  wire::Hello hello_;
};

}  // namespace mecha::server
