#!/usr/bin/env python3
# make-seeds.py: writes the seed corpus of fuzz-safetensors-header into
# fuzz/corpus/safetensors: a few valid files of every shape of header the
# format allows, and broken ones near each validation rule.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "safetensors")


def file_bytes(header, data=b"", pad=True):
    """A safetensors file: header length, header (a dict or text), data."""
    text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    raw = text.encode("utf-8")
    if pad:
        raw += b" " * (-(8 + len(raw)) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


SEEDS = {
    # valid
    "valid-empty": file_bytes({}),
    "valid-metadata": file_bytes({"__metadata__": {"format": "pt", "note": "\u00fc"}}),
    "valid-every-dtype": file_bytes(
        {"d": tensor("F64", [2], 0, 16), "i": tensor("I64", [1, 1], 16, 24),
         "f": tensor("F32", [3], 24, 36), "b": tensor("BF16", [2], 36, 40),
         "h": tensor("F16", [2], 40, 44), "u": tensor("U8", [4], 44, 48)},
        struct.pack("<2d", 1.5, -2.0) + struct.pack("<q", 7) + struct.pack("<3f", 1, 2, 3)
        + bytes([0x80, 0x3f, 0x80, 0x7f]) + bytes([0x00, 0x3c, 0x01, 0x00]) + bytes(4)),
    "valid-scalar-and-empty": file_bytes(
        {"s": tensor("F32", [], 0, 4), "e": tensor("F64", [0, 3], 4, 4),
         "t": tensor("I64", [2, 0], 4, 4)}, struct.pack("<f", 0.5)),
    "valid-3d": file_bytes({"w": tensor("F32", [2, 3, 2], 0, 48)},
                           struct.pack("<12f", *range(12))),
    # broken
    "bad-short": b"\x10\x00\x00",
    "bad-length-huge": struct.pack("<Q", 2 ** 63) + b"{}",
    "bad-length-past-end": struct.pack("<Q", 64) + b"{}",
    "bad-json": file_bytes('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]', bytes(4)),
    "bad-json-comment": file_bytes('/**/{}'),
    "bad-json-duplicate": file_bytes('{"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                                     bytes(4)),
    "bad-json-deep": file_bytes('{"w":' + "[" * 80 + "]" * 80 + "}"),
    "bad-json-big-int": file_bytes('{"w":{"dtype":"F32","shape":[18446744073709551617],'
                                   '"data_offsets":[0,4]}}', bytes(4)),
    "bad-not-object": file_bytes("[1, 2]"),
    "bad-unknown-field": file_bytes({"w": {**tensor("F32", [1], 0, 4), "x": 1}}, bytes(4)),
    "bad-dtype": file_bytes({"w": tensor("F33", [1], 0, 4)}, bytes(4)),
    "bad-shape": file_bytes({"w": tensor("F32", [-1], 0, 4)}, bytes(4)),
    "bad-offsets-reversed": file_bytes({"w": tensor("F32", [1], 4, 0)}, bytes(4)),
    "bad-offsets-past-end": file_bytes({"w": tensor("F32", [4], 0, 16)}, bytes(4)),
    "bad-size": file_bytes({"w": tensor("F32", [2, 2], 0, 12)}, bytes(12)),
    "bad-overlap": file_bytes({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 4, 12)},
                              bytes(12)),
    "bad-hole": file_bytes({"a": tensor("F32", [1], 0, 4), "b": tensor("F32", [1], 8, 12)},
                           bytes(12)),
    "bad-metadata": file_bytes({"__metadata__": {"n": 1}}),
    "bad-utf8": struct.pack("<Q", 4) + b'{"\xff"',
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name + ".safetensors"), "wb") as out:
            out.write(data)


if __name__ == "__main__":
    main()
