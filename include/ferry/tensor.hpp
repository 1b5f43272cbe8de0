#pragma once
// ferry/tensor: DataItem, Dataset, Tensor<T> and the message wire format.
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/dims.hpp>
#include <ferry/tensor/print.hpp>
#include <ferry/tensor/tensor.hpp>
#include <ferry/tensor/tensor_kind.hpp>
#include <ferry/tensor/wire_format.hpp>
