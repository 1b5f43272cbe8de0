#pragma once
// Everything ferry offers to C++: include this, or the one module you use.
#include <ferry/core.hpp>
#include <ferry/tensor.hpp>
#include <ferry/channel.hpp>
#include <ferry/runtime.hpp>
#include <ferry/kernel.hpp>
#include <ferry/afd.hpp>
