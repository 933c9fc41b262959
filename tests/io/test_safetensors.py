# test_safetensors.py: safetensors files through Hp (GObject introspection)
# against an independent writer and reader that follow the published
# format with numpy, json and struct only
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import struct
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))
from hptest import GLib, Hp, assert_error  # noqa: E402

# safetensors dtype name -> little-endian numpy dtype; numpy has no
# bfloat16, so BF16 reads as its bits
NP_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}
HP_TO_NP = {Hp.DType.FLOAT32: np.float32, Hp.DType.FLOAT64: np.float64, Hp.DType.INT64: np.int64}
NP_TO_HP = {np.dtype(np.float32): Hp.DType.FLOAT32, np.dtype(np.float64): Hp.DType.FLOAT64,
            np.dtype(np.int64): Hp.DType.INT64}


def bf16_bytes(values):
    """bfloat16 is the upper half of a float32; the values must be exact."""
    bits = np.asarray(values, dtype="<f4").view("<u4")
    assert np.all(bits & 0xFFFF == 0), "not exactly representable in bfloat16"
    return (bits >> 16).astype("<u2").tobytes()


def bf16_round(values):
    """The bits of the bfloat16 nearest to each float32, ties to even,
    by integer arithmetic on the float32 bits: adding 0x7fff, and one
    more when the kept half is odd, carries into the kept half exactly
    when the dropped half is above one half or one half with the kept
    half odd. Every NaN is 0x7fc0, as torch writes it."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded).astype("<u2")


def bf16_values(bits):
    """bfloat16 bits as the float32 values they are."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def write_reference(path, tensors, metadata=None):
    """Writes a safetensors file as the format describes it: an 8-byte
    little-endian header length N, N bytes of JSON, the data buffer.
    tensors maps names to (dtype name, shape, raw little-endian bytes),
    laid out in the given order; the header uses json's default spacing
    and lists the tensors in reverse, which a reader must accept."""
    header = {}
    chunks = []
    offset = 0
    entries = {}
    for name, (dtype, shape, data) in tensors.items():
        entries[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in reversed(list(entries)):
        header[name] = entries[name]
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        out.write(b"".join(chunks))


def read_reference(path):
    """Reads a safetensors file as the format describes it. Returns the
    metadata, the arrays by name, the header and its length."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length].decode("utf-8"))
    data = raw[8 + length:]
    metadata = header.pop("__metadata__", {})
    arrays = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        arrays[name] = np.frombuffer(data[begin:end], dtype=NP_DTYPES[info["dtype"]]).reshape(info["shape"])
    return metadata, arrays, header, length, len(data)


def to_numpy(tensor):
    return np.frombuffer(tensor.get_bytes().get_data() or b"",
                         dtype=HP_TO_NP[tensor.get_dtype()]).reshape(tensor.get_shape())


def from_numpy(array):
    # tobytes() is row-major for any array (np.ascontiguousarray would
    # make a 0-d array 1-d)
    return Hp.Tensor.new_from_bytes(GLib.Bytes.new(array.tobytes()), NP_TO_HP[array.dtype], list(array.shape))


def assert_same(test, actual, expected):
    """Same dtype, shape and bits (NaNs included)."""
    test.assertEqual(actual.dtype, expected.dtype)
    test.assertEqual(actual.shape, expected.shape)
    test.assertEqual(actual.tobytes(), expected.tobytes())


# Values of the reference file
W = np.arange(6, dtype=np.float32).reshape(2, 3) * np.float32(0.25) - np.float32(0.5)
D = np.array([1e-300, -2.5, np.pi, 1e300], dtype=np.float64)
IDS = np.array([[0, -1], [np.iinfo(np.int64).max, np.iinfo(np.int64).min]], dtype=np.int64)
SCALAR = np.array(-7.25, dtype=np.float32)
EMPTY = np.zeros((0, 3), dtype=np.float64)
HALF = np.array([0.0, -0.0, 1.0, -2.0, 65504.0, 2.0 ** -14, 2.0 ** -24, 1023 * 2.0 ** -24,
                 np.inf, -np.inf, np.nan, 0.333251953125], dtype=np.float16)
BF = np.array([0.0, 1.0, -2.5, 3.140625, 2.0 ** -133, np.inf, -np.inf], dtype=np.float32)


class TestReferenceFile(unittest.TestCase):
    """A file written by the independent writer loads through Hp."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "model.safetensors")
        write_reference(self.path, {
            "w": ("F32", W.shape, W.astype("<f4").tobytes()),
            "ids": ("I64", IDS.shape, IDS.astype("<i8").tobytes()),
            "half": ("F16", HALF.shape, HALF.astype("<f2").tobytes()),
            "d": ("F64", D.shape, D.astype("<f8").tobytes()),
            "scalar": ("F32", (), SCALAR.astype("<f4").tobytes()),
            "empty": ("F64", EMPTY.shape, b""),
            "bf": ("BF16", BF.shape, bf16_bytes(BF)),
        }, metadata={"format": "pt", "note": "\u00fcber"})

    def tearDown(self):
        self.dir.cleanup()

    def test_load(self):
        sd = Hp.safetensors_load(self.path)
        self.assertEqual(sd.get_names(), sorted(["w", "ids", "half", "d", "scalar", "empty", "bf"]))
        assert_same(self, to_numpy(sd.lookup("w")), W)
        assert_same(self, to_numpy(sd.lookup("d")), D)
        assert_same(self, to_numpy(sd.lookup("ids")), IDS)
        assert_same(self, to_numpy(sd.lookup("scalar")), SCALAR)
        assert_same(self, to_numpy(sd.lookup("empty")), EMPTY)
        # half precision loads as float32, exactly as numpy converts it
        assert_same(self, to_numpy(sd.lookup("half")), HALF.astype(np.float32))
        assert_same(self, to_numpy(sd.lookup("bf")), BF)

    def test_file(self):
        f = Hp.SafetensorsFile.new_for_path(self.path)
        self.assertEqual(f.props.path, self.path)
        self.assertEqual(f.props.n_tensors, 7)
        self.assertEqual(f.get_metadata(), {"format": "pt", "note": "\u00fcber"})
        self.assertEqual(f.get_dtype("half"), "F16")
        self.assertEqual(f.get_dtype("bf"), "BF16")
        self.assertEqual(f.get_shape("w"), [2, 3])
        self.assertEqual(f.get_shape("scalar"), [])
        self.assertEqual(f.get_shape("empty"), [0, 3])
        self.assertTrue(f.contains("ids"))
        self.assertFalse(f.contains("W"))
        assert_same(self, to_numpy(f.get_tensor_slice("w", [1, 1], [1, 2])), W[1:2, 1:3])
        assert_same(self, to_numpy(f.get_tensor_slice("half", [3], [6])), HALF[3:9].astype(np.float32))
        assert_same(self, to_numpy(f.get_tensor_slice("bf", [1], [3])), BF[1:4])
        assert_same(self, to_numpy(f.get_tensor_slice("scalar", [], [])), SCALAR)
        assert_error(self, Hp.Error.INVALID_ARGUMENT, self.path + ": no tensor 'x'", f.get_tensor, "x")
        assert_error(self, Hp.Error.SHAPE,
                     self.path + ": tensor 'w': the block at offset 1 of length 2 in dim 0 is outside "
                     "the shape [2, 3]", f.get_tensor_slice, "w", [1, 0], [2, 3])

    def test_checkpoint_directory(self):
        checkpoint = Hp.SafetensorsCheckpoint.new_for_path(self.dir.name)
        self.assertEqual(checkpoint.get_n_files(), 1)
        self.assertEqual(checkpoint.get_metadata()["format"], "pt")
        assert_same(self, to_numpy(checkpoint.get_tensor("ids")), IDS)


class TestHpFile(unittest.TestCase):
    """A file written by Hp reads back with the independent reader."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.arrays = {
            "layers.0.weight": np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32),
            "layers.0.bias": np.array([1.5, -2.25, 3e-38], dtype=np.float32),
            "norm.scale": np.array(0.5, dtype=np.float64),
            "tokens": np.array([[3, -4, 2 ** 62]], dtype=np.int64),
            "empty": np.zeros((2, 0), dtype=np.float32),
            "double": np.random.default_rng(1).standard_normal((2, 2, 2)),
        }
        self.sd = Hp.StateDict.new()
        for name, array in self.arrays.items():
            self.sd.insert(name, from_numpy(array))

    def tearDown(self):
        self.dir.cleanup()

    def test_save(self):
        path = os.path.join(self.dir.name, "out.safetensors")
        Hp.safetensors_save(self.sd, {"format": "pt", "step": "12"}, path)
        metadata, arrays, header, length, data_size = read_reference(path)
        self.assertEqual(metadata, {"format": "pt", "step": "12"})
        self.assertEqual(sorted(arrays), sorted(self.arrays))
        for name, array in self.arrays.items():
            assert_same(self, arrays[name], array.astype(array.dtype.newbyteorder("<")))
        # padded header, data without gaps, each tensor aligned
        self.assertEqual((8 + length) % 8, 0)
        spans = sorted(tuple(info["data_offsets"]) for info in header.values())
        self.assertEqual(spans[0][0], 0)
        for (_, end), (begin, _) in zip(spans, spans[1:]):
            self.assertEqual(end, begin)
        self.assertEqual(spans[-1][1], data_size)
        for info in header.values():
            self.assertEqual(info["data_offsets"][0] % (4 if info["dtype"] == "F32" else 8), 0)

    def test_save_sharded(self):
        out = os.path.join(self.dir.name, "ckpt")
        Hp.safetensors_save_sharded(self.sd, {"format": "pt"}, out, 64)
        with open(os.path.join(out, "model.safetensors.index.json")) as f:
            index = json.load(f)
        self.assertEqual(index["metadata"]["total_size"], sum(a.nbytes for a in self.arrays.values()))
        self.assertEqual(index["metadata"]["format"], "pt")
        self.assertEqual(sorted(index["weight_map"]), sorted(self.arrays))
        shards = sorted(set(index["weight_map"].values()))
        # in order: [weight 60] [bias 12, scale 8, tokens 24, empty 0] [double 64]
        self.assertEqual(shards, ["model-0000%d-of-00003.safetensors" % i for i in range(1, 4)])
        self.assertEqual([index["weight_map"][n] for n in self.arrays],
                         [shards[0], shards[1], shards[1], shards[1], shards[1], shards[2]])
        seen = {}
        for shard in shards:
            metadata, arrays, _, _, _ = read_reference(os.path.join(out, shard))
            self.assertEqual(metadata, {"format": "pt"})
            data_bytes = sum(a.nbytes for a in arrays.values())
            self.assertTrue(data_bytes <= 64 or len(arrays) == 1)
            for name, array in arrays.items():
                self.assertEqual(index["weight_map"][name], shard)
                seen[name] = array
        for name, array in self.arrays.items():
            assert_same(self, seen[name], array.astype(array.dtype.newbyteorder("<")))
        # and Hp reads it back
        sd = Hp.safetensors_load(out)
        for name, array in self.arrays.items():
            assert_same(self, to_numpy(sd.lookup(name)), array)

    def test_reference_sharded_loads(self):
        out = os.path.join(self.dir.name, "ref")
        os.mkdir(out)
        names = list(self.arrays)
        weight_map = {}
        for i, group in enumerate([names[:3], names[3:]]):
            shard = "model-%05d-of-00002.safetensors" % (i + 1)
            write_reference(os.path.join(out, shard),
                            {n: ({np.dtype(np.float32): "F32", np.dtype(np.float64): "F64",
                                  np.dtype(np.int64): "I64"}[self.arrays[n].dtype],
                                 self.arrays[n].shape, self.arrays[n].tobytes()) for n in group})
            weight_map.update({n: shard for n in group})
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 1}, "weight_map": weight_map}, f)
        checkpoint = Hp.SafetensorsCheckpoint.new_for_path(out)
        self.assertEqual(checkpoint.props.n_files, 2)
        self.assertEqual(checkpoint.get_metadata(), {})
        sd = checkpoint.to_state_dict()
        self.assertEqual(sd.get_names(), sorted(names))
        for name, array in self.arrays.items():
            assert_same(self, to_numpy(sd.lookup(name)), array)
        block = checkpoint.get_tensor_slice("double", [1, 0, 1], [1, 2, 1])
        assert_same(self, to_numpy(block), self.arrays["double"][1:2, 0:2, 1:2])


def random_floats(rng, dtype, n):
    """Values of every magnitude and sign: normal numbers scaled over a
    wide range of exponents, random bit patterns (NaNs left out: numpy
    keeps a signalling NaN's payload unquieted), and the special values."""
    bits_dtype, exponents = (np.uint32, 160) if dtype == np.float32 else (np.uint64, 400)
    scaled = rng.standard_normal(n) * np.exp2(rng.integers(-exponents, exponents, n).astype(np.float64))
    with np.errstate(over="ignore"):
        scaled = scaled.astype(dtype)
    raw = rng.integers(0, np.iinfo(bits_dtype).max, n, dtype=bits_dtype, endpoint=True).view(dtype)
    raw = raw[~np.isnan(raw)]
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -2.0, 65504.0, 65519.0,
                        65520.0, 65536.0, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -24,
                        np.finfo(np.float32).max, np.finfo(np.float32).tiny,
                        1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40], dtype=dtype)
    return np.concatenate([scaled, raw, special])


def expected_file(array, dtype):
    """What a file of dtype holds for array, as torch's .to() makes it: a
    float64 goes through float32 first (torch's Half and BFloat16 are
    made from a float), then numpy's float16 cast (to nearest even) or
    bf16_round()."""
    with np.errstate(over="ignore"):
        as_float = array.astype(np.float32)
        if dtype == "F16":
            return as_float.astype("<f2")
        if dtype == "BF16":
            return bf16_round(as_float)
        return array.astype({"F32": "<f4", "F64": "<f8"}[dtype])


def stored_values(stored, dtype):
    """The values a file's data stands for, as Hp loads them"""
    if dtype == "BF16":
        return bf16_values(stored)
    return stored.astype({"F16": np.float32, "F32": np.float32, "F64": np.float64}[dtype])


class TestSaveDtype(unittest.TestCase):
    """Random float32 and float64 tensors saved in every dtype: the file's
    bytes are those of an independent conversion, and load back exactly."""

    DTYPES = {Hp.SafetensorsDType.BF16: "BF16", Hp.SafetensorsDType.F16: "F16",
              Hp.SafetensorsDType.F32: "F32", Hp.SafetensorsDType.F64: "F64"}

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        rng = np.random.default_rng(15)
        self.arrays = {
            "f32": random_floats(rng, np.float32, 20000),
            "f64": random_floats(rng, np.float64, 20000),
            "ids": np.array([1, -2, 2 ** 62], dtype=np.int64),
        }
        self.sd = Hp.StateDict.new()
        for name, array in self.arrays.items():
            self.sd.insert(name, from_numpy(array))

    def tearDown(self):
        self.dir.cleanup()

    def check(self, arrays, header, loaded, dtype):
        for name, array in self.arrays.items():
            if array.dtype == np.int64:
                # integers are never converted
                self.assertEqual(header[name]["dtype"], "I64")
                assert_same(self, arrays[name], array.astype("<i8"))
                assert_same(self, to_numpy(loaded.lookup(name)), array)
                continue
            expected = expected_file(array, dtype)
            self.assertEqual(header[name]["dtype"], dtype)
            self.assertEqual(arrays[name].tobytes(), expected.tobytes(), name + " in " + dtype)
            assert_same(self, to_numpy(loaded.lookup(name)), stored_values(expected, dtype))

    def test_save(self):
        for hp_dtype, dtype in self.DTYPES.items():
            path = os.path.join(self.dir.name, dtype + ".safetensors")
            Hp.safetensors_save_with_dtype(self.sd, {"format": "pt"}, path, hp_dtype)
            metadata, arrays, header, _, _ = read_reference(path)
            self.assertEqual(metadata, {"format": "pt"})
            self.check(arrays, header, Hp.safetensors_load(path), dtype)

    def test_save_sharded(self):
        for hp_dtype, dtype in self.DTYPES.items():
            out = os.path.join(self.dir.name, dtype)
            Hp.safetensors_save_sharded_with_dtype(self.sd, None, out, 1000, hp_dtype)
            with open(os.path.join(out, "model.safetensors.index.json")) as f:
                index = json.load(f)
            arrays, header = {}, {}
            for shard in sorted(set(index["weight_map"].values())):
                _, shard_arrays, shard_header, _, _ = read_reference(os.path.join(out, shard))
                arrays.update(shard_arrays)
                header.update(shard_header)
            self.assertEqual(index["metadata"]["total_size"], sum(a.nbytes for a in arrays.values()))
            self.check(arrays, header, Hp.safetensors_load(out), dtype)

    def test_as_is(self):
        path = os.path.join(self.dir.name, "as-is.safetensors")
        Hp.safetensors_save_with_dtype(self.sd, None, path, Hp.SafetensorsDType.AS_IS)
        _, arrays, header, _, _ = read_reference(path)
        self.assertEqual([header[n]["dtype"] for n in ("f32", "f64", "ids")], ["F32", "F64", "I64"])
        for name, array in self.arrays.items():
            assert_same(self, arrays[name], array.astype(array.dtype.newbyteorder("<")))

    def test_names(self):
        self.assertEqual(Hp.safetensors_dtype_from_string("bf16"), (True, Hp.SafetensorsDType.BF16))
        self.assertEqual(Hp.SafetensorsDType.from_string("as-is"), (True, Hp.SafetensorsDType.AS_IS))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "unknown safetensors dtype 'bfloat16' (expected one of as-is, bf16, f16, f32, f64)",
                     Hp.safetensors_dtype_from_string, "bfloat16")


class TestErrors(unittest.TestCase):

    def test_format_error(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.safetensors")
            write_reference(path, {"w": ("F32", (2, 2), bytes(12))})
            assert_error(self, Hp.Error.FORMAT,
                         path + ": tensor 'w': data_offsets [0, 12] hold 12 bytes but dtype F32 "
                         "and shape [2, 2] need 16", Hp.safetensors_load, path)
            sub = os.path.join(d, "sub")
            os.mkdir(sub)
            assert_error(self, Hp.Error.IO, sub + ": the directory has neither "
                         "model.safetensors.index.json nor model.safetensors",
                         Hp.SafetensorsCheckpoint.new_for_path, sub)

    def test_from_bytes(self):
        data = GLib.Bytes.new(struct.pack("<Q", 2) + b"{}")
        f = Hp.SafetensorsFile.new_from_bytes(data, None)
        self.assertEqual(f.get_names(), [])
        self.assertIsNone(f.props.path)
        assert_error(self, Hp.Error.FORMAT, "<bytes>: header length 3 is more than the 2 bytes after it",
                     Hp.SafetensorsFile.new_from_bytes, GLib.Bytes.new(struct.pack("<Q", 3) + b"{}"), None)


if __name__ == "__main__":
    unittest.main()
