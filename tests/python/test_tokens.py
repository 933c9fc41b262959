# test_tokens.py: the byte tokenizer, token datasets of text and of
# llm.c shards, and the token loader from Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import struct
import tempfile
import unittest

from hptest import Hp, assert_error


class TestByteTokenizer(unittest.TestCase):
    def test_round_trip(self):
        tokenizer = Hp.ByteTokenizer.new()
        text = "héllo wörld — ✓ 𝄞\n"
        ids = tokenizer.encode(text, -1)
        self.assertEqual(ids, list(text.encode("utf-8")))
        self.assertEqual(tokenizer.decode(ids + [Hp.BYTE_TOKENIZER_EOT]), text)
        self.assertEqual(Hp.BYTE_TOKENIZER_VOCAB_SIZE, Hp.BYTE_TOKENIZER_EOT + 1)

    def test_invalid_bytes(self):
        tokenizer = Hp.ByteTokenizer.new()
        self.assertEqual(tokenizer.decode([0x61, 0xC3, 0x62]), "a\ufffdb")

    def test_bad_id(self):
        tokenizer = Hp.ByteTokenizer.new()
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "id 300 at 0 is not a byte (0 to 255) or end-of-text (256)",
                     tokenizer.decode, [300])


def write_shard(path, tokens, magic=20240520, version=1, code="H"):
    """A shard as llm.c's write_datafile lays it out"""
    header = [magic, version, len(tokens)] + [0] * 253
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header) + struct.pack(f"<{len(tokens)}{code}", *tokens))


class TestTokenDataset(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_text(self):
        dataset = Hp.TokenDataset.new_from_text("héllo", -1)
        self.assertEqual(dataset.get_n_tokens(), 7)
        self.assertEqual(dataset.get_max_token(), Hp.BYTE_TOKENIZER_EOT)
        ids = dataset.read(0, 7).numpy().tolist()
        self.assertEqual(Hp.ByteTokenizer.new().decode(ids), "héllo")
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "8 tokens at 0: expected at least 1, within the 7 of the dataset",
                     dataset.read, 0, 8)

    def test_shards_and_splits(self):
        write_shard(self.path("s_train_000001.bin"), [5, 6, 7, 8], 20240801, 7, "I")
        write_shard(self.path("s_train_000000.bin"), [1, 2, 3, 4])
        write_shard(self.path("s_val_000000.bin"), [9, 10])
        files = Hp.TokenDataset.expand_path(self.tmp.name)
        self.assertEqual([os.path.basename(f) for f in files],
                         ["s_train_000000.bin", "s_train_000001.bin", "s_val_000000.bin"])
        whole = Hp.TokenDataset.new_from_files(files)
        self.assertEqual(whole.read(0, 10).numpy().tolist(), list(range(1, 11)))
        self.assertEqual(whole.slice(3, 6).read(0, 3).numpy().tolist(), [4, 5, 6])
        self.assertEqual(Hp.TokenDataset.new_from_file(files[1]).get_max_token(), 8)

        train, val = Hp.TokenDataset.open_splits(self.tmp.name, 0.0)
        self.assertEqual(train.read(0, 8).numpy().tolist(), list(range(1, 9)))
        self.assertEqual(val.read(0, 2).numpy().tolist(), [9, 10])
        train, val = Hp.TokenDataset.open_splits(files[0], 0.5)
        self.assertEqual((train.get_n_tokens(), val.get_n_tokens()), (2, 2))
        train, val = Hp.TokenDataset.open_splits(files[0], 0.0)
        self.assertIsNone(val)
        self.assertEqual(Hp.TOKEN_SHARD_HEADER_SIZE, 1024)
        self.assertEqual(os.path.getsize(files[0]), Hp.TOKEN_SHARD_HEADER_SIZE + 4 * 2)

    def test_errors(self):
        write_shard(self.path("bad.bin"), [1, 2], magic=1234)
        assert_error(self, Hp.Error.FORMAT,
                     self.path("bad.bin") + ": magic number 1234 is not that of a token shard "
                     "(20240520 for uint16 ids, 20240801 for uint32)",
                     Hp.TokenDataset.new_from_file, self.path("bad.bin"))
        assert_error(self, Hp.Error.IO, self.path("*.none") + ": no file matches *.none",
                     Hp.TokenDataset.open_splits, self.path("*.none"), 0.1)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "validation fraction 1: expected at least 0 and less than 1",
                     Hp.TokenDataset.open_splits, self.path("bad.bin"), 1.0)


class TestTokenLoader(unittest.TestCase):
    def test_batches(self):
        dataset = Hp.TokenDataset.new_from_text("abcdefghi", -1)
        loader = Hp.TokenLoader.new(dataset, 2, 3)
        self.assertEqual((loader.get_batch_size(), loader.get_seq_len()), (2, 3))
        self.assertIs(loader.get_dataset(), dataset)
        inputs, targets = loader.next(0, 2)
        self.assertEqual(inputs.numpy().tolist(), [list(b"abc"), list(b"def")])
        self.assertEqual(targets.numpy().tolist(), [list(b"bcd"), list(b"efg")])
        self.assertEqual(loader.get_position(), 6)
        # the second rank's row of the next batch runs around the end
        inputs, targets = loader.next(1, 1)
        self.assertEqual(inputs.numpy().tolist(), [[Hp.BYTE_TOKENIZER_EOT] + list(b"ab")])
        loader.set_position(0)
        self.assertEqual(loader.next(1, 1)[0].numpy().tolist(), [list(b"def")])
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "position 10 is outside the 10 tokens of the dataset", loader.set_position, 10)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "3 tokens, fewer than one sequence of 3 + 1",
                     Hp.TokenLoader.new, Hp.TokenDataset.new_from_text("ab", -1), 1, 3)


if __name__ == "__main__":
    unittest.main()
