#pragma once
// ferry::net::Secret — the job's shared secret, which a peer presents before a node exposes
// anything to it (docs/multi-node.md, Security).
//
// Every process of a job gets the same secret, from FERRY_NET_SECRET (the bytes of the value)
// or FERRY_NET_SECRET_FILE (the bytes of the file, one trailing newline dropped); the variable
// wins when both are set. A secret is 1 to k_max_bytes bytes. Comparison takes the same time
// whatever the bytes, so a wrong guess tells nothing about how much of it was right.
//
// The secret keeps out processes that do not belong to the job; it does not hide traffic: UCX's
// TCP transport is not encrypted, so anyone who can read the network can read the secret. Run
// jobs on a network you trust (docs/multi-node.md says how to keep the listener off others).

#include <cstddef>
#include <cstdlib>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

namespace ferry::net {

class Secret {
public:
    static constexpr std::size_t k_max_bytes = 256;

    // An empty secret: not usable (Node::start refuses it).
    Secret() = default;

    // invalid_param for an empty or too long secret.
    [[nodiscard]] static Result<Secret> from_bytes(std::string_view bytes) {
        if (bytes.empty() || bytes.size() > k_max_bytes) {
            return Status::invalid_param;
        }
        Secret s;
        s.bytes_.assign(bytes);
        return s;
    }

    // FERRY_NET_SECRET, else FERRY_NET_SECRET_FILE; invalid_param when neither is set, the file
    // cannot be read, or the secret is empty or too long.
    [[nodiscard]] static Result<Secret> from_environment() {
        if (const char* value = std::getenv("FERRY_NET_SECRET"); value != nullptr) {
            return from_bytes(value);
        }
        const char* path = std::getenv("FERRY_NET_SECRET_FILE");
        if (path == nullptr) {
            return Status::invalid_param;
        }
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            return Status::invalid_param;
        }
        std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!contents.empty() && contents.back() == '\n') {
            contents.pop_back();
        }
        return from_bytes(contents);
    }

    [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
        return std::as_bytes(std::span(bytes_.data(), bytes_.size()));
    }

    // Constant time in the presented bytes (for a given length of this secret).
    [[nodiscard]] bool matches(std::span<const std::byte> presented) const noexcept {
        unsigned char diff = presented.size() == bytes_.size() ? 0 : 1;
        for (std::size_t i = 0; i < bytes_.size(); ++i) {
            const auto theirs = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
            diff |= static_cast<unsigned char>(static_cast<unsigned char>(bytes_[i]) ^ theirs);
        }
        return diff == 0 && !bytes_.empty();
    }

private:
    std::string bytes_;
};

} // namespace ferry::net
