# test_tokens.py: the byte tokenizer from Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later

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


if __name__ == "__main__":
    unittest.main()
