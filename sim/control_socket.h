/* SPDX-License-Identifier: Apache-2.0 */
// The `sim:` control socket of docs/sim-socket.md: a Unix stream socket, one client at a
// time, one 12-byte request and one 8-byte answer per 32-bit bus transaction.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace matcha {

struct SocketError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Request {
    uint8_t op;  // 'R', 'W', 'C' or 'X'; anything else is answered RESP_CANNOT_RUN
    uint32_t addr;
    uint32_t data;
    bool zero_padded;  // bytes 1..3 are zero, as the protocol requires
};

constexpr uint8_t OP_READ = 'R';
constexpr uint8_t OP_WRITE = 'W';
// Simulator requests, no bus transaction (docs/sim-socket.md "Simulator requests").
constexpr uint8_t OP_CLOCK = 'C';  // the clock of the CSV files, now
constexpr uint8_t OP_RESET = 'X';  // reset the pipeline; traffic waits for this client to close
constexpr uint8_t RESP_OKAY = 0, RESP_SLVERR = 2, RESP_DECERR = 3;
constexpr uint8_t RESP_CANNOT_RUN = 0xFF;  // unknown op, unaligned address

class ControlSocket {
  public:
    // Listens on `path`. A path where another process listens is refused; a socket file
    // nobody listens on (left by a process that died) is replaced; any other file there
    // is refused. Throws SocketError with a message naming the path.
    explicit ControlSocket(const std::string& path);
    ~ControlSocket();
    ControlSocket(const ControlSocket&) = delete;
    ControlSocket& operator=(const ControlSocket&) = delete;

    // Accepts a waiting client if there is none and reads what it sent, without blocking.
    // Returns true with `req` filled when a whole request has arrived. A client that
    // closes the connection (also in the middle of a request) is dropped.
    bool poll(Request& req);
    // Sends the answer to the request poll() returned last. A client gone meanwhile is
    // dropped.
    void answer(const Request& req, uint8_t resp, uint32_t data);
    // Blocks until a client connects or the connected client sends something (or the
    // timeout passes): what the simulator does while there is nothing to simulate.
    void wait(int timeout_ms);

    bool connected() const { return client_ >= 0; }
    // Connections that have been accepted and closed since the start.
    unsigned closed_clients() const { return closed_; }
    unsigned transactions() const { return transactions_; }
    const std::string& path() const { return path_; }

  private:
    void drop_client();

    std::string path_;
    int listen_ = -1;
    int client_ = -1;
    uint8_t buf_[12];
    size_t have_ = 0;
    unsigned closed_ = 0;
    unsigned transactions_ = 0;
};

}  // namespace matcha
