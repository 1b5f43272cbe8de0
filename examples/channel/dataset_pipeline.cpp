// dataset_pipeline: the host side of a TDT feed, in typed C++. A producer thread sends batches
// (one Dataset each: a float tensor and a label tensor) through a Channel<Dataset, 64>, then an
// END_OF_SEQUENCE dataset; the consumer receives them in order, checks every value, and stops the
// channel. Datasets move through the channel: the payload a receive gets is the very buffer the
// producer filled (no copy), which the example checks too. Exit status 0 only if all is well;
// runs as a test in suite 'examples'.

#include <cstdint>
#include <cstdlib>
#include <ferry/channel.hpp>
#include <ferry/tensor.hpp>
#include <iostream>
#include <thread>
#include <vector>

namespace {

constexpr int k_batches = 100;
constexpr std::int64_t k_batch_size = 4;
constexpr std::int64_t k_features = 8;

// Batch b: features[i][j] = b + i * 0.5 + j * 0.01, labels[i] = b * 10 + i.
ferry::Result<ferry::Dataset> make_batch(int b) {
    std::vector<float> features;
    std::vector<std::int32_t> labels;
    for (std::int64_t i = 0; i < k_batch_size; ++i) {
        for (std::int64_t j = 0; j < k_features; ++j) {
            features.push_back(static_cast<float>(b) + static_cast<float>(i) * 0.5F +
                               static_cast<float>(j) * 0.01F);
        }
        labels.push_back(b * 10 + static_cast<std::int32_t>(i));
    }
    auto x = ferry::Tensor<float>::from(features, {k_batch_size, k_features});
    auto y = ferry::Tensor<std::int32_t>::from(labels);
    if (!x || !y) {
        return ferry::Status::bad_alloc;
    }
    ferry::Dataset batch;
    if (ferry::failed(batch.add(std::move(*x).into_item())) ||
        ferry::failed(batch.add(std::move(*y).into_item()))) {
        return ferry::Status::invalid_param;
    }
    return batch;
}

bool batch_is(const ferry::Dataset& ds, int b) {
    auto expected = make_batch(b);
    return expected && ds == *expected;
}

} // namespace

int main() {
    ferry::Channel<ferry::Dataset, 64> feed; // spsc: one producer, one consumer
    std::vector<const void*> sent_payloads(k_batches, nullptr);
    ferry::Status producer_status = ferry::Status::ok;

    std::thread producer([&] {
        for (int b = 0; b < k_batches; ++b) {
            auto batch = make_batch(b);
            if (!batch) {
                producer_status = batch.status();
                return;
            }
            sent_payloads[static_cast<std::size_t>(b)] = (*batch)[0].data();
            // Blocks while 64 batches wait; a failure would hand the batch back in *batch.
            if (const ferry::Status s = feed.send(std::move(*batch)); ferry::failed(s)) {
                producer_status = s;
                return;
            }
        }
        ferry::Dataset end;
        (void)end.add(ferry::DataItem::end_of_sequence());
        producer_status = feed.send(std::move(end));
    });

    int received = 0;
    int wrong = 0;
    int copied = 0;
    for (;;) {
        auto ds = feed.receive_for(std::chrono::seconds(10));
        if (!ds) {
            std::cerr << "receive failed: " << ferry::name_of(ds.status()) << '\n';
            break;
        }
        if (ds->size() == 1 && (*ds)[0].kind() == ferry::TensorKind::end_of_sequence) {
            feed.stop(); // nothing more will come; a late sender would get `stopped`
            break;
        }
        wrong += batch_is(*ds, received) ? 0 : 1;
        copied += (*ds)[0].data() == sent_payloads[static_cast<std::size_t>(received)] ? 0 : 1;
        ++received;
    }
    producer.join();

    std::cout << "received " << received << " batches of " << k_batch_size << "x" << k_features
              << " floats + labels, then END_OF_SEQUENCE\n";
    std::cout << "wrong batches: " << wrong << ", payloads copied in transit: " << copied << '\n';
    std::cout << "producer: " << ferry::name_of(producer_status)
              << ", channel stopped: " << std::boolalpha << feed.stopped() << '\n';
    const bool ok =
        received == k_batches && wrong == 0 && copied == 0 && ferry::succeeded(producer_status);
    std::cout << (ok ? "dataset pipeline OK\n" : "dataset pipeline FAILED\n");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
