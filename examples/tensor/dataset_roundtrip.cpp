// dataset_roundtrip: build a dataset of a few typed tensors and an END_OF_SEQUENCE marker,
// serialize it into one message, parse the message back, print both, and fail (exit 1) if the
// round trip changed anything. It is the README's demo and runs as a test in suite 'examples'.

#include <array>
#include <cstdint>
#include <cstdlib>
#include <ferry/tensor.hpp>
#include <iostream>
#include <vector>

namespace {

// Adds `item` (or reports why it could not be made or added).
bool add(ferry::Dataset& ds, ferry::Result<ferry::DataItem> item) {
    if (!item) {
        std::cerr << "creating an item failed: " << ferry::name_of(item.status()) << '\n';
        return false;
    }
    if (const ferry::Status s = ds.add(std::move(*item)); ferry::failed(s)) {
        std::cerr << "adding an item failed: " << ferry::name_of(s) << '\n';
        return false;
    }
    return true;
}

bool build(ferry::Dataset& ds) {
    const std::vector<float> image{1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F};
    const std::array<std::int64_t, 3> labels{7, 8, 9};
    const std::vector<ferry::float16> half{ferry::float16(0.5F), ferry::float16(-1.25F)};

    auto matrix = ferry::Tensor<float>::from(image, {2, 3});
    if (!matrix) {
        return false;
    }
    return ferry::succeeded(ds.set_name("demo")) && add(ds, std::move(*matrix).into_item()) &&
           add(ds, ferry::DataItem::from(labels)) && add(ds, ferry::DataItem::from(half, {1, 2})) &&
           add(ds, ferry::DataItem::end_of_sequence());
}

} // namespace

int main() {
    ferry::Dataset sent;
    if (!build(sent)) {
        return EXIT_FAILURE;
    }
    std::cout << "sent:     " << sent << '\n';

    const auto message = ferry::serialize(sent);
    if (!message) {
        std::cerr << "serialize failed: " << ferry::name_of(message.status()) << '\n';
        return EXIT_FAILURE;
    }
    std::cout << "message:  " << message->size() << " bytes\n";

    const auto received = ferry::parse(*message);
    if (!received) {
        std::cerr << "parse failed: " << ferry::name_of(received.status()) << '\n';
        return EXIT_FAILURE;
    }
    std::cout << "received: " << *received << '\n';

    if (!(*received == sent)) {
        std::cerr << "round trip FAILED: the parsed dataset differs from the one sent\n";
        return EXIT_FAILURE;
    }
    std::cout << "round trip OK\n";
    return EXIT_SUCCESS;
}
