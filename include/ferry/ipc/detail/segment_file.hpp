#pragma once
// The file behind a segment: descriptors, mappings, the owner check, and bounded waits.

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <ferry/ipc/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace ferry::ipc::detail {

using Clock = std::chrono::steady_clock;

inline Error system_error(Status status, std::string what, int error_number) {
    return Error{status, "ipc: " + what + ": " + std::strerror(error_number), error_number};
}

class FileDescriptor {
public:
    FileDescriptor() noexcept = default;
    explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    FileDescriptor& operator=(FileDescriptor&& other) noexcept {
        std::swap(fd_, other.fd_);
        return *this;
    }
    ~FileDescriptor() { reset(); }
    void reset() noexcept {
        if (fd_ >= 0) {
            ::close(std::exchange(fd_, -1));
        }
    }
    [[nodiscard]] int get() const noexcept { return fd_; }

private:
    int fd_ = -1;
};

class Mapping {
public:
    Mapping() noexcept = default;
    Mapping(void* address, std::size_t bytes) noexcept : address_(address), bytes_(bytes) {}
    Mapping(Mapping&& other) noexcept
        : address_(std::exchange(other.address_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {
    }
    Mapping& operator=(Mapping&& other) noexcept {
        std::swap(address_, other.address_);
        std::swap(bytes_, other.bytes_);
        return *this;
    }
    ~Mapping() { reset(); }
    void reset() noexcept {
        if (address_ != nullptr) {
            ::munmap(std::exchange(address_, nullptr), std::exchange(bytes_, 0));
        }
    }
    [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(address_); }
    [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

private:
    void* address_ = nullptr;
    std::size_t bytes_ = 0;
};

inline Expected<Mapping> map_shared(int fd, std::size_t bytes) {
    void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) {
        return system_error(Status::bad_alloc, "mmap of " + std::to_string(bytes) + " bytes",
                            errno);
    }
    return Mapping(address, bytes);
}

// Opens an existing segment's file; ENOENT is reported as "no segment".
inline Expected<FileDescriptor> open_existing(const std::string& shm_name) {
    const int fd = ::shm_open(shm_name.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) {
        const int e = errno;
        if (e == ENOENT) {
            return Error{Status::not_found, "ipc: no segment " + shm_name, e};
        }
        return system_error(Status::invalid_file, "shm_open " + shm_name, e);
    }
    return FileDescriptor(fd);
}

// Only a regular file with mode 0600 owned by our effective uid is ours: anything else may
// have been planted by another user and is neither opened nor reclaimed.
inline std::optional<Error> check_owner(int fd, const std::string& shm_name) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return system_error(Status::invalid_file, "fstat " + shm_name, errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return Error{Status::invalid_file, "ipc: " + shm_name + " is not a regular file", 0};
    }
    if (st.st_uid != ::geteuid()) {
        return Error{Status::invalid_file,
                     "ipc: " + shm_name + " is owned by uid " + std::to_string(st.st_uid) +
                         ", not by this process's uid " + std::to_string(::geteuid()),
                     0};
    }
    if ((st.st_mode & 07777) != 0600) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return Error{Status::invalid_file,
                     "ipc: " + shm_name + " has mode " + mode + ", expected 0600", 0};
    }
    return std::nullopt;
}

inline std::optional<std::size_t> file_size(int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(st.st_size);
}

// Polls `ready()` with a growing pause (50 us .. 5 ms) until it holds or `deadline` passes.
// Used only where there is nothing to block on (a file size, an flock held by a peer).
template <typename Predicate>
bool poll_until(Clock::time_point deadline, Predicate ready) {
    auto pause = std::chrono::microseconds(50);
    for (;;) {
        if (ready()) {
            return true;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::microseconds(5000));
    }
}

// The lock every unlinker of a segment's file takes (docs/processes.md, Stale segments): while
// it is held, the name cannot be unlinked and re-created under the holder.
inline std::optional<Error> lock_for_unlink(int fd, const std::string& shm_name,
                                            Clock::time_point deadline) {
    int error_number = EWOULDBLOCK;
    poll_until(deadline, [&] {
        error_number = ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
        return error_number != EWOULDBLOCK && error_number != EINTR; // locked, or a hard error
    });
    if (error_number == 0) {
        return std::nullopt;
    }
    if (error_number == EWOULDBLOCK || error_number == EINTR) {
        return Error{Status::timed_out, "ipc: " + shm_name + " stayed locked by another process",
                     0};
    }
    return system_error(Status::failure, "flock " + shm_name, error_number);
}

// Which file a descriptor refers to (device and inode).
struct FileId {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    friend bool operator==(const FileId&, const FileId&) = default;
};
inline FileId file_id(int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return {};
    }
    return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

// Takes a shared flock on `fd`, polling until `deadline` (a process removing the segment holds
// it exclusively for a moment). The kernel drops a lock whose holder dies.
inline bool lock_shared(int fd, Clock::time_point deadline) {
    return poll_until(deadline, [fd] { return ::flock(fd, LOCK_SH | LOCK_NB) == 0; });
}

// Whether `shm_name` still names the file open as `fd` (not unlinked and re-created since).
inline bool still_named(int fd, const std::string& shm_name) {
    const int again = ::shm_open(shm_name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (again < 0) {
        return false;
    }
    struct stat a {};
    struct stat b {};
    const bool same = ::fstat(fd, &a) == 0 && ::fstat(again, &b) == 0 && a.st_dev == b.st_dev &&
                      a.st_ino == b.st_ino;
    ::close(again);
    return same;
}

// Removes `shm_name` only if it still names the file open as `fd`: never a newer segment that
// took the name since. The caller holds lock_for_unlink (or the creation lock) on `fd`, so the
// name cannot change hands between the check and the unlink.
inline std::optional<Error> unlink_if_named(int fd, const std::string& shm_name) {
    if (still_named(fd, shm_name) && ::shm_unlink(shm_name.c_str()) != 0 && errno != ENOENT) {
        return system_error(Status::failure, "shm_unlink " + shm_name, errno);
    }
    return std::nullopt;
}

} // namespace ferry::ipc::detail
