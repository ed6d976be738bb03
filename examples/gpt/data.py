"""Byte-level data for the example GPT trainer.

Tokens are raw bytes (vocabulary 256), so no tokenizer is needed and nothing
is downloaded. The default corpus is English-like text produced at run time
by a small deterministic grammar (`generate_corpus`): the same seed gives the
same bytes on every machine and Python version (it only uses
`random.Random(seed).random()` style draws, whose sequence Python keeps
stable). `--data PATH` trains on any file instead (its bytes are the tokens).

    /usr/bin/python3 examples/gpt/data.py --write /tmp/corpus.txt   # look at it

Sampling is deterministic and resumable: the global batch of step s draws
its windows from a generator seeded with (seed, s), and each rank takes its
contiguous shard of it. The sampler's whole state is therefore the step; a
checkpoint stores it and a resumed run continues the exact data stream it
would have seen without the restart, also at another world size as long as
the global batch stays the same.
"""
import argparse
import random
import sys

import numpy as np
import torch

DEFAULT_CORPUS_SEED = 20240521
DEFAULT_CORPUS_BYTES = 256 * 1024

# --- the grammar --------------------------------------------------------------

_NAMES = ["Ada", "Bram", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas",
          "Kira", "Lars", "Mina", "Nils", "Olga", "Pavel", "Rosa", "Sven", "Tilde", "Ulla"]
_NOUNS = ["river", "garden", "lantern", "mountain", "village", "library", "ship", "forest",
          "window", "bridge", "letter", "market", "kettle", "orchard", "harbor", "clock",
          "meadow", "tower", "road", "wagon", "candle", "field", "song", "storm", "door"]
_ANIMALS = ["fox", "heron", "dog", "cat", "horse", "owl", "goat", "sparrow", "badger", "mule"]
_ADJS = ["old", "quiet", "small", "bright", "cold", "narrow", "green", "heavy", "gentle",
         "broken", "golden", "distant", "warm", "dark", "patient", "crooked", "clean", "wild"]
_VERBS_T = ["watched", "carried", "found", "painted", "mended", "followed", "counted", "opened",
            "closed", "remembered", "visited", "crossed", "cleaned", "described", "sold", "built"]
_VERBS_I = ["waited", "laughed", "slept", "sang", "worked", "listened", "walked", "rested",
            "wondered", "hurried", "smiled", "stayed"]
_ADVS = ["slowly", "quietly", "again", "carefully", "at once", "without a word", "all day",
         "once more", "with great care", "before dawn"]
_PLACES = ["by the river", "in the garden", "near the old bridge", "at the market",
           "under the tower", "behind the library", "on the narrow road", "in the village",
           "beside the harbor", "across the meadow"]
_TIMES = ["In the morning", "At noon", "That evening", "Late at night", "Every spring",
          "On the first day of winter", "After the storm", "Before the market opened",
          "Long ago", "One autumn"]
_CONJ = ["and then", "but", "so", "while", "because", "although"]
_SAY = ["said", "asked", "whispered", "replied", "called out"]
_TITLES = ["The Lantern", "The Harbor Road", "A Winter Market", "The Clockmaker",
           "The Green Door", "Letters from the Tower", "The Quiet Orchard", "The Ferry"]


class _Grammar:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def pick(self, items):
        # Index from random() (not choice()) so the stream is stable across versions.
        return items[int(self.rng.random() * len(items))]

    def chance(self, p):
        return self.rng.random() < p

    def noun_phrase(self):
        det = self.pick(["the", "a", "the", "her", "his", "their"])
        words = [self.pick(_ADJS)] if self.chance(0.5) else []
        words.append(self.pick(_NOUNS + _ANIMALS))
        if det == "a" and words[0][0] in "aeiou":
            det = "an"
        return " ".join([det] + words)

    def subject(self):
        return self.pick(_NAMES) if self.chance(0.55) else self.noun_phrase()

    def clause(self):
        subj = self.subject()
        if self.chance(0.6):
            body = f"{subj} {self.pick(_VERBS_T)} {self.noun_phrase()}"
        else:
            body = f"{subj} {self.pick(_VERBS_I)}"
        if self.chance(0.4):
            body += " " + self.pick(_PLACES)
        if self.chance(0.3):
            body += " " + self.pick(_ADVS)
        return body

    def sentence(self):
        r = self.rng.random()
        if r < 0.15:
            name = self.pick(_NAMES)
            quote = self.clause()
            quote = quote[0].upper() + quote[1:]
            end = "?" if self.chance(0.3) else "."
            return f"\"{quote}{end}\" {self.pick(_SAY)} {name}."
        if r < 0.35:
            text = f"{self.pick(_TIMES)}, {self.clause()}"
        elif r < 0.6:
            text = f"{self.clause()}, {self.pick(_CONJ)} {self.clause()}"
        else:
            text = self.clause()
        text = text[0].upper() + text[1:]
        return text + ("!" if self.chance(0.05) else ".")

    def paragraph(self):
        n = 3 + int(self.rng.random() * 5)
        return " ".join(self.sentence() for _ in range(n))


def generate_corpus(seed=DEFAULT_CORPUS_SEED, target_bytes=DEFAULT_CORPUS_BYTES):
    """Deterministic English-like text of about target_bytes bytes (ASCII)."""
    g = _Grammar(seed)
    parts, size, chapter = [], 0, 0
    while size < target_bytes:
        chapter += 1
        title = f"Chapter {chapter}. {g.pick(_TITLES)}\n\n"
        parts.append(title)
        size += len(title)
        for _ in range(4 + int(g.rng.random() * 4)):
            para = g.paragraph() + "\n\n"
            parts.append(para)
            size += len(para)
    return "".join(parts).encode("ascii")[:target_bytes]


def load_tokens(path=None, corpus_bytes=DEFAULT_CORPUS_BYTES, corpus_seed=DEFAULT_CORPUS_SEED):
    """The token stream (np.uint8): the bytes of `path`, or the generated corpus."""
    if path:
        with open(path, "rb") as f:
            data = f.read()
    else:
        data = generate_corpus(corpus_seed, corpus_bytes)
    return np.frombuffer(data, dtype=np.uint8).copy()


# --- sampling -------------------------------------------------------------------

class TokenSampler:
    """Random windows of seq_len+1 tokens, drawn as one global batch per step
    and sharded over the ranks.

    Step s (counting completed optimizer steps from 0) draws the window starts
    of all global_batch = micro_batch x world_size x grad_accum sequences from
    a generator seeded with (seed, s). Rank r takes its contiguous shard,
    sequences r*micro_batch*grad_accum onwards, in grad_accum micro-batches of
    micro_batch. The global batch of a step therefore depends only on the seed,
    the step and its size: when a run resumes at another world size with the
    same global batch (--global-batch), every step sees exactly the sequences
    it would have seen at the old size, just spread over other ranks. The
    sampler's whole state is the step (and the micro-batch within it).
    """

    KIND = "global-windows-v2"
    OLD_KIND = "random-windows-v1"   # per-rank streams; resumable only at the checkpoint's step

    def __init__(self, tokens, seq_len, batch_size, seed, rank=0, device="cpu", world_size=1, grad_accum=1):
        if len(tokens) < seq_len + 2:
            raise ValueError(f"corpus has {len(tokens)} tokens, fewer than seq_len+2 = {seq_len + 2}")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in a world of {world_size}")
        self.tokens = tokens
        self.seq_len = seq_len
        self.batch_size = batch_size
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.grad_accum = grad_accum
        self.global_batch = batch_size * world_size * grad_accum
        self.device = device
        self.step = 0    # completed steps: the next batch belongs to step self.step
        self.micro = 0   # the next micro-batch within that step
        self._offsets = np.arange(seq_len + 1)
        self._starts = (None, None)   # (step, window starts of its global batch)

    def global_starts(self, step):
        """Window starts of the whole global batch of `step` (every rank's shard)."""
        if self._starts[0] != step:
            rng = np.random.default_rng([self.seed, step])
            self._starts = (step, rng.integers(0, len(self.tokens) - self.seq_len - 1, size=self.global_batch))
        return self._starts[1]

    def next_batch(self):
        first = (self.rank * self.grad_accum + self.micro) * self.batch_size
        starts = self.global_starts(self.step)[first:first + self.batch_size]
        self.micro += 1
        if self.micro == self.grad_accum:
            self.step, self.micro = self.step + 1, 0
        windows = torch.from_numpy(self.tokens[starts[:, None] + self._offsets].astype(np.int64))
        x, y = windows[:, :-1], windows[:, 1:]
        if str(self.device) != "cpu":
            x = x.pin_memory().to(self.device, non_blocking=True)
            y = y.pin_memory().to(self.device, non_blocking=True)
        return x.contiguous(), y.contiguous()

    def state_dict(self):
        return {"kind": self.KIND, "seed": self.seed, "step": self.step, "micro": self.micro,
                "global_batch": self.global_batch}

    def load_state_dict(self, state, step=None):
        """Continue the stream of a checkpoint, whatever world size wrote it. `step`
        (the checkpoint's step) positions a sampler state of the old per-rank kind."""
        kind = state.get("kind")
        if kind == self.OLD_KIND and step is not None:
            self.seed, self.step, self.micro = int(state["seed"]), int(step), 0
            return
        if kind != self.KIND:
            raise ValueError(f"unknown sampler state kind {kind!r}")
        # Keep the checkpoint's seed so the resumed stream is the one that was interrupted.
        self.seed = int(state["seed"])
        self.step = int(state["step"])
        self.micro = int(state.get("micro", 0))   # 0: checkpoints are taken between steps
        if self.micro >= self.grad_accum:
            self.step, self.micro = self.step + 1, 0


def main(argv=None):
    p = argparse.ArgumentParser(description="Write or inspect the generated training corpus.")
    p.add_argument("--write", metavar="PATH", help="write the corpus to PATH")
    p.add_argument("--bytes", type=int, default=DEFAULT_CORPUS_BYTES)
    p.add_argument("--seed", type=int, default=DEFAULT_CORPUS_SEED)
    args = p.parse_args(argv)
    data = generate_corpus(args.seed, args.bytes)
    if args.write:
        with open(args.write, "wb") as f:
            f.write(data)
        print(f"wrote {len(data)} bytes to {args.write}")
    else:
        sys.stdout.write(data[:2000].decode("ascii") + "\n...\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
