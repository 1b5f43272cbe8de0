#pragma once
// ferry::afd::AutoWait — the default wait policy of ferry's C++ schedulers and simulators: park on
// the doorbell when the waited-on memory is a window whose writers ring, poll otherwise, and give
// up when the peer process that should write it has died.
//
// The wait loop (detail/wait_loop.hpp) binds the policy to the ScheduleContext it waits on, once
// per wait. AutoWait looks the context up in the WaitDirectory (wait_directory.hpp):
//  - memory whose registrant gave a WaitDriver (a net::ExposedWindow): the driver's steps — the
//    waiter progresses the window's Node itself and sleeps on its worker's fd (net::NetWait's
//    wait, without naming ferry/net); its sleeps end by the next peer probe;
//  - a window's owner side, with a doorbell: DoorbellPark (spin 64 polls, then park in slices of at
//    most 20 ms, so a run_flag stored without a ring is still seen; a slice also ends at the next
//    peer probe);
//  - anything else — in-process memory, a LocalWindow, a peer's mapping of another process's
//    window, where the writer that frees a slot does not ring: SpinThenPark<>, exactly as before;
//  - a window of either side, with a peer probe: every k_peer_check (20 ms) at most, whether a
//    process registered in the window's segment died; the loop then ends with peer_lost.
// Writers that cannot ring (the C API, device operators) leave no doorbell in the directory, so
// their waiters keep polling. Pass an explicit policy (DoorbellPark, SpinThenPark, ...) to choose.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/wait_directory.hpp>
#include <ferry/afd/wait_policy.hpp>

namespace ferry::afd {

class AutoWait {
public:
    using clock = Doorbell::clock;
    static constexpr std::chrono::milliseconds k_peer_check{20};

    // Binds to the memory being waited on (the wait loop passes the context's address).
    void bind(const void* waited_on) {
        if (const auto found = WaitDirectory::instance().find(waited_on)) {
            driver_ = found->driver;
            park_ = DoorbellPark(found->bell);
            parking_ = !driver_.connected() && found->bell.connected();
            peers_ = found->peers;
            // The first look at /proc comes one period in: a wait that is served at once (the
            // common case) never pays for it.
            next_check_ = clock::now() + k_peer_check;
        }
    }

    [[nodiscard]] bool parks_on_doorbell() const noexcept { return parking_; }
    [[nodiscard]] bool drives_transport() const noexcept { return driver_.connected(); }
    [[nodiscard]] bool watches_peers() const noexcept { return peers_.connected(); }
    // Parks on the doorbell, or the driver's sleeps.
    [[nodiscard]] std::uint32_t parks() const noexcept {
        return driver_.connected() ? driving_.sleeps : park_.parks();
    }

    void prepare() noexcept {
        if (driver_.connected()) {
            driver_.prepare(driver_.arg, driving_);
        } else if (parking_) {
            park_.prepare();
        }
    }
    void pause_until(clock::time_point deadline) noexcept {
        if (driver_.connected()) {
            // A sleep ends by the next probe as well (at most the driver's max_sleep anyway).
            driver_.pause_until(driver_.arg, driving_,
                                peers_.connected() ? std::min(deadline, next_check_) : deadline);
        } else if (parking_) {
            // A park ends by the next probe, so a lost peer is noticed within k_peer_check
            // although one park may last up to DoorbellPark's 20 ms bound.
            park_.pause_until(peers_.connected() ? std::min(deadline, next_check_) : deadline);
        } else {
            poll_.pause();
        }
    }
    void pause() noexcept { pause_until(clock::time_point::max()); }
    void finish() noexcept {
        if (driver_.connected()) {
            driver_.finish(driver_.arg, driving_);
        }
        park_.finish();
    }

    // True once a peer process of the window died; reads /proc at most every k_peer_check.
    [[nodiscard]] bool peer_lost() noexcept {
        if (!peers_.connected()) {
            return false;
        }
        const auto now = clock::now();
        if (now < next_check_) {
            return false;
        }
        next_check_ = now + k_peer_check;
        return peers_.peer_lost();
    }

private:
    DoorbellPark park_;
    SpinThenPark<> poll_;
    PeerProbe peers_;
    WaitDriver driver_;
    DriverState driving_;
    clock::time_point next_check_{};
    bool parking_ = false;
};

static_assert(WaitPolicy<AutoWait>);

} // namespace ferry::afd
