#pragma once
// Channel policies: who may call what, and how long a blocked call spins before it parks.
//
// Options as policy types (Boost.Lockfree style, style.md): `spsc` is the default and the fastest
// (one sender thread, one receiver thread at a time); `mpmc` admits any number of each. A user
// who wants a different spin budget derives a policy:
//
//     struct my_policy : ferry::mpmc { static constexpr unsigned spin_limit = 0; };
//
// spin_limit is the number of retries (each with a CPU pause) a blocking call makes before it
// parks on a futex. 0 parks at once, which suits long timeouts on small machines
// (concurrentqueue #286: spinning can dominate a profile). spsc's default, 2048, is chosen to
// outlast a core-to-core hand-off and a scheduler wake-up on a VM, so a busy pipeline rarely
// parks — each park costs a membarrier and a futex wake, which made blocking throughput and
// ping-pong latency clearly worse at 256 (docs/performance/channel.md has the current rows).
// mpmc keeps 256: with many threads on few cores, a long spin takes the CPU from the thread it
// waits for.
//
// asymmetric_barrier chooses who pays for "did anyone fall asleep?" (detail/event_count.hpp):
// true (default) makes every send and receive free of locked instructions and makes a thread
// that parks pay one membarrier(2) syscall; false makes every send and receive pay one atomic
// RMW and parking cheaper. Without kernel support for membarrier, true behaves as false.

#include <concepts>

namespace ferry {

struct spsc {
    static constexpr bool multi_producer = false;
    static constexpr bool multi_consumer = false;
    static constexpr unsigned spin_limit = 2048;
    static constexpr bool asymmetric_barrier = true;
};

struct mpmc {
    static constexpr bool multi_producer = true;
    static constexpr bool multi_consumer = true;
    static constexpr unsigned spin_limit = 256;
    static constexpr bool asymmetric_barrier = true;
};

template <typename P>
concept ChannelPolicy = requires {
    { P::multi_producer } -> std::convertible_to<bool>;
    { P::multi_consumer } -> std::convertible_to<bool>;
    { P::spin_limit } -> std::convertible_to<unsigned>;
    { P::asymmetric_barrier } -> std::convertible_to<bool>;
}
&&(P::multi_producer == P::multi_consumer); // spsc or mpmc: the two rings that exist

} // namespace ferry
