#!/usr/bin/env python3
# sentencepiece-shards.py: tokenizes text with a sentencepiece model
# trained on that same text, and writes token shards in llm.c's format
# that `hp-train --data` reads
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   python3 sentencepiece-shards.py OUTDIR TEXT... [--vocab-size 1024] [--val-fraction 0.1]
#   mpirun -np 2 hp-train --tp 2 --data OUTDIR --set vocab-size=1024 --eval-every 50
#
# OUTDIR gets tokenizer.model, text_train_000000.bin with the first
# tokens and text_val_000000.bin with the last --val-fraction of them:
# hp-train trains on the shards of a directory whose name has no "val"
# and validates on the others. Each TEXT file is a document, ended by
# the model's end-of-sentence id.
#
# A shard is 256 little-endian int32 (the magic number 20240520, the
# version 1, the number of tokens, zeros) followed by the tokens as
# little-endian uint16: ids below 65536, which any vocabulary this
# small has.

import argparse
import io
import os
import struct

import sentencepiece as spm


def write_shard(path, tokens):
    header = [20240520, 1, len(tokens)] + [0] * 253
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))
    print(f"{path}: {len(tokens)} tokens")


def main():
    parser = argparse.ArgumentParser(description="Writes llm.c token shards of text "
                                     "tokenized with a sentencepiece model trained on it")
    parser.add_argument("outdir")
    parser.add_argument("texts", nargs="+")
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--val-fraction", type=float, default=0.1)
    args = parser.parse_args()

    documents = []
    for name in args.texts:
        with open(name, encoding="utf-8") as f:
            documents.append(f.read())
    lines = [line for document in documents for line in document.splitlines() if line.strip()]

    # a byte fallback makes every text encodable; the model is written
    # beside the shards to decode what a trained model says
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model,
                                   vocab_size=args.vocab_size, model_type="bpe",
                                   byte_fallback=True, character_coverage=1.0,
                                   minloglevel=2)
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())

    tokens = []
    for document in documents:
        tokens += processor.encode(document) + [processor.eos_id()]
    n_val = int(len(tokens) * args.val_fraction)
    write_shard(os.path.join(args.outdir, "text_train_000000.bin"), tokens[:len(tokens) - n_val])
    write_shard(os.path.join(args.outdir, "text_val_000000.bin"), tokens[len(tokens) - n_val:])
    print(f"vocab-size {processor.get_piece_size()}: hp-train --data {args.outdir} "
          f"--set vocab-size={processor.get_piece_size()}")


if __name__ == "__main__":
    main()
