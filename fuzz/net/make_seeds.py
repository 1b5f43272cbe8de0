#!/usr/bin/env python3
"""Writes fuzz/net/corpus: valid messages of every kind (and a few near misses) in the record
format of fuzz/net/script.hpp. Run from anywhere: python3 fuzz/net/make_seeds.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_BYTES, SERVER_TURN, CLIENT_TURN, ANSWER_INFO = 0, 1, 2, 3
WINDOW_WRITE, WINDOW_LAND, CHANNEL, CHANNEL_LOCAL, RECONNECT = 4, 5, 6, 7, 8
AUTH, RNDV = 1, 2
PUT, RING, FLUSH, OTHER = 0, 1, 2, 3  # the window's kind byte (script: put, ring, flush, heartbeat)
OPEN, DATA, WANT, GIVE_BACK, STOP, CLOSE = 1, 4, 6, 8, 9, 10
TAKE, GIVE, LAND, FAIL, STOP_LOCAL, LOSE = 0, 1, 2, 3, 4, 5


def record(kind, body=b"", flags=0, repeat_exponent=0):
    return struct.pack("<BBH", kind, flags | (repeat_exponent << 4), len(body)) + body


def info(regions=((0x1000, 256),), address=b"\x5a" * 48, token=0x1234):
    out = struct.pack("<QII", token, len(address), len(regions)) + address
    for i, (base, size) in enumerate(regions):
        out += struct.pack("<IIQQ", i, 0, base, size)
    return out


def hello_body():
    return struct.pack("<IHH", 0x46524248, 1, 0) + bytes(range(32)) + b"\x11" * 16


def write(which, body, payload=b""):
    return bytes([which, len(body)]) + body + payload


def put(region, offset):
    return struct.pack("<IIQ", region, 0, offset)


def channel(kind, to, sender, a=0, b=0, c=0, payload=b""):
    return struct.pack("<IHHIIQQQ", 0x464E4348, kind, 0, to, sender, a, b, c) + payload


def fnv1a32(text):
    h = 2166136261
    for ch in text.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


NAME = "fuzz.channel"
OPEN_IT = record(CHANNEL, channel(OPEN, fnv1a32(NAME), 100, 0, 2, payload=NAME.encode()), AUTH)

SEEDS = {
    "handshake_full": record(SERVER_TURN, b"\x21" * 48, AUTH)
    + record(SERVER_TURN, info(), AUTH) + record(SERVER_TURN, b"", AUTH),
    "handshake_wrong_secret": record(SERVER_TURN, b"\x21" * 48)
    + record(SERVER_TURN, info()) + record(SERVER_TURN, b""),
    "handshake_malformed_info": record(SERVER_TURN, b"\x21" * 48, AUTH)
    + record(SERVER_TURN, info()[:-3], AUTH),
    "server_raw_hello": record(SERVER_BYTES, struct.pack("<I", 56) + hello_body()),
    "server_raw_reflected": record(SERVER_BYTES, struct.pack("<I", 56) + hello_body()[:40]
                                   + b"\x4e" + b"\x00" * 15),
    "server_raw_over_cap": record(SERVER_BYTES, b"\xff\xff\xff\xff" + b"\x00" * 8),
    "client_challenge_proved": record(CLIENT_TURN, b"\x22" * 48, AUTH),
    "client_challenge_wrong_secret": record(CLIENT_TURN, b"\x22" * 48),
    "client_challenge_reflected": record(CLIENT_TURN, b"\xc1" + b"\x00" * 15, AUTH),
    "answer_info_valid": record(ANSWER_INFO, info(((0x1000, 256), (0x2000, 64)))),
    "answer_info_wrapping_region": record(ANSWER_INFO, info(((0xFFFFFFFFFFFFFF00, 0x200),))),
    "window_put_ring_flush": record(WINDOW_WRITE, write(PUT, put(0, 0), b"\x77" * 32), AUTH)
    + record(WINDOW_WRITE, write(RING, struct.pack("<II", 0, 0)), AUTH)
    + record(WINDOW_WRITE, write(FLUSH, struct.pack("<Q", 1)), AUTH),
    "window_data_then_flag": record(WINDOW_WRITE, write(PUT, put(1, 8), b"\x33" * 100),
                                    AUTH | RNDV)
    + record(WINDOW_WRITE, write(PUT, put(1, 0), struct.pack("<I", 1)), AUTH)
    + record(WINDOW_WRITE, write(RING, struct.pack("<II", 1, 0)), AUTH)
    + record(WINDOW_LAND),
    "window_outside": record(WINDOW_WRITE, write(PUT, put(0, 250), b"\x01" * 8), AUTH)
    + record(WINDOW_WRITE, write(PUT, put(1, 200), b"\x01"), AUTH)
    + record(WINDOW_WRITE, write(PUT, put(2, 0), b"\x01"), AUTH)
    + record(WINDOW_WRITE, write(PUT, put(0, 2**64 - 4), b"\x01" * 8), AUTH),
    "window_forged_token": record(WINDOW_WRITE, write(PUT, put(0, 0), b"\x66" * 16))
    + record(WINDOW_WRITE, write(0x80, struct.pack("<IHHQ", 0x46524E54, 2, 4, 1) + put(0, 0),
                                 b"\x66" * 16)),
    "window_queue_cap": record(WINDOW_WRITE, write(PUT, put(0, 0), b"\x01" * 64), AUTH | RNDV)
    + record(WINDOW_WRITE, write(RING, struct.pack("<II", 0, 0)), AUTH, 12)
    + record(WINDOW_WRITE, write(RING, struct.pack("<II", 0, 0)), AUTH)
    + record(WINDOW_LAND),
    "window_empty_put": record(WINDOW_WRITE, write(PUT, put(0, 0)), AUTH)
    + record(WINDOW_WRITE, write(PUT, put(1, 200)), AUTH),
    "window_other_kind": record(WINDOW_WRITE, write(OTHER, b""), AUTH),
    "channel_open_data_take": OPEN_IT
    + record(CHANNEL, channel(DATA, 7, 100, 1, payload=b"\x44" * 16), AUTH)
    + record(CHANNEL_LOCAL, bytes([TAKE])) + record(CHANNEL_LOCAL, bytes([GIVE]))
    + record(CHANNEL, channel(WANT, 7, 100), AUTH)
    + record(CHANNEL, channel(GIVE_BACK, 7, 100, 1), AUTH)
    + record(CHANNEL, channel(CLOSE, 7, 100, 0), AUTH),
    "channel_rendezvous": OPEN_IT
    + record(CHANNEL, channel(DATA, 7, 100, 1, payload=b"\x44" * 3), AUTH | RNDV)
    + record(CHANNEL_LOCAL, bytes([LAND])) + record(CHANNEL_LOCAL, bytes([TAKE]))
    + record(CHANNEL_LOCAL, bytes([FAIL])),
    "channel_many_senders": record(CHANNEL, channel(OPEN, fnv1a32(NAME), 100, 0, 2,
                                                    payload=NAME.encode()), AUTH, 7)
    + record(CHANNEL, channel(OPEN, fnv1a32(NAME), 5000, 0, 2, payload=NAME.encode()), 0, 10),
    "channel_stop_and_loss": OPEN_IT + record(CHANNEL, channel(STOP, 7, 100), AUTH)
    + record(CHANNEL_LOCAL, bytes([STOP_LOCAL])) + record(CHANNEL_LOCAL, bytes([LOSE, 1])),
    "channel_wrong_flavor": record(CHANNEL, channel(OPEN, fnv1a32(NAME), 1, 64, 1,
                                                    payload=NAME.encode()), AUTH),
    "reconnect": record(SERVER_TURN, b"\x21" * 48, AUTH) + record(RECONNECT)
    + record(SERVER_TURN, b"\x21" * 48, AUTH),
}

if __name__ == "__main__":
    corpus = os.path.join(HERE, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(corpus, name + ".bin"), "wb") as f:
            f.write(data)
