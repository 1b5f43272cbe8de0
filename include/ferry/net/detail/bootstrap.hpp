#pragma once
// The sockets of ferry/net's front door (docs/security.md): the listening TCP socket a Node
// accepts handshakes on, and the blocking-with-a-deadline reads and writes of the connecting
// side. Plain POSIX sockets, non-blocking, close-on-exec; every read bounded by a Framer.

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <ferry/net/detail/address.hpp>
#include <ferry/net/detail/handshake_session.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace ferry::net::detail::bootstrap {

using clock = std::chrono::steady_clock;

// Closes the descriptor it holds.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) noexcept : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset() noexcept {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }

private:
    int fd_ = -1;
};

// A non-blocking listening socket on `at`; its real address in `bound`. Invalid (and `error`
// set) when it cannot be made.
[[nodiscard]] inline Fd listen_on(const SockAddr& at, std::string& bound, std::string& error) {
    Fd fd(::socket(at.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    const int one = 1;
    if (!fd.valid() || ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd.get(), at.get(), at.length) != 0 || ::listen(fd.get(), 128) != 0) {
        error = std::string("cannot listen: ") + std::strerror(errno);
        return {};
    }
    sockaddr_storage storage{};
    socklen_t length = sizeof storage;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
        error = std::string("cannot read the listening address: ") + std::strerror(errno);
        return {};
    }
    bound = format_address(storage);
    return fd;
}

// Waits until `fd` is ready for `events` or the deadline; false on timeout or error.
[[nodiscard]] inline bool wait_for(int fd, short events, clock::time_point deadline) {
    while (true) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
        if (left.count() <= 0) {
            return false;
        }
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
        if (n > 0) {
            return (p.revents & (events | POLLHUP | POLLERR)) != 0;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

// A connected socket to `to`, non-blocking; invalid when refused, unreachable or too slow.
[[nodiscard]] inline Fd connect_to(const SockAddr& to, clock::time_point deadline) {
    Fd fd(::socket(to.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
        return {};
    }
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd.get(), to.get(), to.length) != 0) {
        if (errno != EINPROGRESS || !wait_for(fd.get(), POLLOUT, deadline)) {
            return {};
        }
        int err = 0;
        socklen_t len = sizeof err;
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            return {};
        }
    }
    return fd;
}

[[nodiscard]] inline bool write_all(int fd, std::span<const std::byte> bytes,
                                    clock::time_point deadline) {
    while (!bytes.empty()) {
        const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n > 0) {
            bytes = bytes.subspan(static_cast<std::size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return false;
        } else if (!wait_for(fd, POLLOUT, deadline)) {
            return false;
        }
    }
    return true;
}

// What a non-blocking read into a Framer found.
enum class ReadResult { more, complete, closed, too_long };

// Reads what is there (never past the Framer's message).
[[nodiscard]] inline ReadResult read_some(int fd, handshake::Framer& framer) {
    std::byte buffer[4096];
    while (!framer.complete()) {
        const auto n = ::recv(fd, buffer, std::min(sizeof buffer, framer.want()), 0);
        if (n == 0) {
            return ReadResult::closed;
        }
        if (n < 0) {
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? ReadResult::more
                                                                             : ReadResult::closed;
        }
        if (!framer.give(std::span(buffer, static_cast<std::size_t>(n)))) {
            return ReadResult::too_long;
        }
    }
    return ReadResult::complete;
}

// One whole message of at most `cap` bytes, or nullopt (closed, too long, deadline).
[[nodiscard]] inline std::optional<std::vector<std::byte>>
read_message(int fd, std::size_t cap, clock::time_point deadline) {
    handshake::Framer framer(cap);
    while (true) {
        switch (read_some(fd, framer)) {
        case ReadResult::complete: {
            const auto body = framer.body();
            return std::vector<std::byte>(body.begin(), body.end());
        }
        case ReadResult::more:
            if (!wait_for(fd, POLLIN, deadline)) {
                return std::nullopt;
            }
            break;
        default:
            return std::nullopt;
        }
    }
}

} // namespace ferry::net::detail::bootstrap
