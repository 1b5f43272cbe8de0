#pragma once
// ferry/net: channels and Attention/FFN windows across machines over UCX (link with ferry-net.pc,
// i.e. UCX's ucp). Not part of <ferry/ferry.hpp>, which needs no UCX. Guide: docs/multi-node.md.
#include <ferry/net/channel.hpp>
#include <ferry/net/message_channel.hpp>
#include <ferry/net/node.hpp>
#include <ferry/net/secret.hpp>
#include <ferry/net/window.hpp>
