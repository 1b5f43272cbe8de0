// A C++ program outside ferry's build that uses the installed (or subproject) ferry through
// <ferry/ferry.hpp> alone: one dataset through a channel and back out of the wire format.
// CONSUMER_MIN_CPLUSPLUS is the standard the consumer's build chose; seeing it here proves no
// flag from ferry's package overrode it (a forced -std=c++20 after a project's -std=c++2b would).
#include <cstdio>
#include <ferry/ferry.hpp>
#include <vector>

#ifndef CONSUMER_MIN_CPLUSPLUS
#define CONSUMER_MIN_CPLUSPLUS 202002L
#endif
static_assert(__cplusplus >= CONSUMER_MIN_CPLUSPLUS, "the consumer's language standard was lost");

static int fail(const char* what) {
    std::printf("ferry consumer: %s\n", what);
    return 1;
}

int main() {
    ferry::Channel<ferry::Dataset, 2> channel;
    const std::vector<float> values{1.0F, 2.0F, 3.0F, 4.0F};
    auto item = ferry::DataItem::from(values, {2, 2});
    ferry::Dataset batch;
    if (!item || batch.add(std::move(*item)) != ferry::Status::ok ||
        channel.try_send(std::move(batch)) != ferry::Status::ok) {
        return fail("could not send a dataset");
    }
    auto received = channel.try_receive();
    if (!received) {
        return fail("could not receive the dataset");
    }
    auto message = ferry::serialize(*received);
    if (!message) {
        return fail("could not serialize the dataset");
    }
    auto parsed = ferry::parse(*message);
    if (!parsed || parsed->size() != 1 || (*parsed)[0].values<float>().value()[3] != 4.0F) {
        return fail("the dataset did not come back intact");
    }
    std::printf("ferry consumer (C++ %ld): ok\n", static_cast<long>(__cplusplus));
    return 0;
}
