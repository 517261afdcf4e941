// SPDX-License-Identifier: Apache-2.0
#include "control_socket.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace matcha {

namespace {

std::string errstr(int err) { return std::strerror(err); }

sockaddr_un address_of(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.empty()) throw SocketError("--socket: empty path");
    if (path.size() >= sizeof(a.sun_path))
        throw SocketError("--socket " + path + ": path longer than " +
                          std::to_string(sizeof(a.sun_path) - 1) + " bytes");
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    return a;
}

uint32_t le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void put_le32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (8 * i));
}

}  // namespace

ControlSocket::ControlSocket(const std::string& path) : path_(path) {
    sockaddr_un a = address_of(path);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            throw SocketError("--socket " + path + ": a file that is not a socket is there");
        // A socket file: in use if someone answers, stale if nobody listens.
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe < 0) throw SocketError("socket(): " + errstr(errno));
        int rc = connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);
        int err = errno;
        close(probe);
        if (rc == 0) throw SocketError("--socket " + path + ": in use by another process");
        if (err != ECONNREFUSED)
            throw SocketError("--socket " + path + ": cannot check the socket there: " +
                              errstr(err));
        if (unlink(path.c_str()) != 0)
            throw SocketError("--socket " + path + ": cannot remove the stale socket: " +
                              errstr(errno));
    }
    listen_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_ < 0) throw SocketError("socket(): " + errstr(errno));
    if (bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        int err = errno;
        close(listen_);
        listen_ = -1;
        throw SocketError("--socket " + path + ": " + errstr(err) +
                          (err == EADDRINUSE ? " (in use by another process)" : ""));
    }
    if (listen(listen_, 8) != 0) {
        int err = errno;
        close(listen_);
        unlink(path.c_str());
        listen_ = -1;
        throw SocketError("--socket " + path + ": listen: " + errstr(err));
    }
}

ControlSocket::~ControlSocket() {
    if (client_ >= 0) close(client_);
    if (listen_ >= 0) {
        close(listen_);
        unlink(path_.c_str());
    }
}

void ControlSocket::drop_client() {
    close(client_);
    client_ = -1;
    have_ = 0;
    closed_++;
}

bool ControlSocket::poll(Request& req) {
    if (client_ < 0) {
        client_ = accept4(listen_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client_ < 0) return false;  // nobody waiting (EAGAIN) or a transient error
        have_ = 0;
    }
    while (have_ < sizeof buf_) {
        ssize_t n = recv(client_, buf_ + have_, sizeof buf_ - have_, MSG_DONTWAIT);
        if (n > 0) {
            have_ += size_t(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
        if (n < 0 && errno == EINTR) continue;
        drop_client();  // closed (n == 0) or broken: a partial request is discarded
        return false;
    }
    have_ = 0;
    req.zero_padded = buf_[1] == 0 && buf_[2] == 0 && buf_[3] == 0;
    req.op = buf_[0];
    req.addr = le32(buf_ + 4);
    req.data = le32(buf_ + 8);
    transactions_++;
    return true;
}

void ControlSocket::answer(const Request& req, uint8_t resp, uint32_t data) {
    if (client_ < 0) return;
    uint8_t out[8] = {req.op, resp, 0, 0};
    put_le32(out + 4, data);
    size_t sent = 0;
    while (sent < sizeof out) {
        ssize_t n = send(client_, out + sent, sizeof out - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // The client does not read its answers: wait for room rather than lose one.
            pollfd p{client_, POLLOUT, 0};
            if (::poll(&p, 1, 1000) > 0) continue;
        }
        drop_client();
        return;
    }
}

void ControlSocket::wait(int timeout_ms) {
    pollfd p{client_ >= 0 ? client_ : listen_, POLLIN, 0};
    ::poll(&p, 1, timeout_ms);
}

}  // namespace matcha
