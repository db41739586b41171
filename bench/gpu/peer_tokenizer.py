"""RoBERTa-style byte-level BPE for the Python peer (bench/gpu/train_peer.py), over the GPT-2 vocabulary this
repository ships (tests/text/fixtures/gpt2): make_tokenizer() returns the first of transformers' RobertaTokenizer,
a bare tokenizers.Tokenizer, or a pure-Python BPE that reproduces the pure-Python oracle on SELF_CHECK_TEXTS.
"""
import gzip
import json
from pathlib import Path

import torch

GPT2_DIR = Path(__file__).resolve().parents[2] / "tests" / "text" / "fixtures" / "gpt2"
BOS, PAD, EOS, UNK = 0, 1, 2, 3  # RoBERTa's special ids (BridgeTowerTextConfig: pad 1, bos 0, eos 2)
SELF_CHECK_TEXTS = [
    "the cat said a man woman dog office boss meeting coffee",
    "Why cannot we just talk about this later? My lawyer says: tomorrow, again!",
    "It's 12:30 -- they'll've   two   spaces and tabs\tand a caf\u00e9 na\u00efve \u00fcber 3.14 \U0001F600",
    "word " * 200,  # longer than any --max_length: checks truncation keeps <s> ... </s>
]

# ----------------------------------------------------------------------------------------------------------------
# Tokenizer: RoBERTa-style byte-level BPE over the GPT-2 vocabulary (the pieces RoBERTa's tokenizer produces; ids
# are GPT-2's + 4 after <s> <pad> </s> <unk>, <mask> last: all < 50265 with pad = 1 as the model expects).


def load_roberta_style_vocab():
    with gzip.open(GPT2_DIR / "encoder.json.gz", "rt", encoding="utf-8") as f:
        gpt2 = json.load(f)
    with gzip.open(GPT2_DIR / "vocab.bpe.gz", "rt", encoding="utf-8") as f:
        merges = [tuple(line.split(" ")) for line in f.read().split("\n")
                  if line and not line.startswith("#version")]
    vocab = {"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK}
    for tok, i in gpt2.items():
        vocab[tok] = i + 4
    vocab["<mask>"] = len(vocab)
    assert all(len(m) == 2 for m in merges) and max(vocab.values()) < 50265
    return vocab, merges


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def pad_rows(rows, max_length, padding):
    width = max_length if padding == "max_length" else max(len(r) for r in rows)
    ids = torch.full((len(rows), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, :len(r)] = 1
    return {"input_ids": ids, "attention_mask": mask}


class PyRobertaBPE:
    """GPT-2's reference byte-level BPE (encoder.py) in Python with RoBERTa framing: the fallback and the oracle."""

    def __init__(self, vocab, merges, max_length, padding):
        try:
            import regex
            self.pat = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
            self.regex = "regex"
        except ImportError:  # the same pattern with re: exact for ASCII, approximate for other scripts
            import re
            self.pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")
            self.regex = "re (approximate \\p{L}/\\p{N})"
        self.vocab, self.ranks = vocab, {m: i for i, m in enumerate(merges)}
        self.byte_enc = bytes_to_unicode()
        self.cache = {}
        self.max_length, self.padding = max_length, padding

    def bpe(self, token):
        word = tuple(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            a, b = best
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == a and word[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = tuple(out)
        return word

    def encode(self, text):
        ids = []
        for piece in self.pat.findall(text):
            got = self.cache.get(piece)
            if got is None:
                mapped = "".join(self.byte_enc[b] for b in piece.encode("utf-8"))
                got = self.cache[piece] = [self.vocab.get(t, UNK) for t in self.bpe(mapped)]
            ids.extend(got)
        return ids

    def __call__(self, texts):
        return pad_rows([[BOS] + self.encode(t)[:self.max_length - 2] + [EOS] for t in texts],
                        self.max_length, self.padding)


class HFTokenizer:
    """transformers tokenizer called as the HF examples call it."""

    def __init__(self, tok, max_length, padding):
        self.tok, self.max_length, self.padding = tok, max_length, padding

    def __call__(self, texts):
        enc = self.tok(texts, padding=self.padding, truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


class RustTokenizer:
    """A bare tokenizers.Tokenizer (what transformers' fast tokenizer wraps)."""

    def __init__(self, tok, max_length, padding):
        tok.enable_truncation(max_length=max_length)
        if padding == "max_length":
            tok.enable_padding(pad_id=PAD, pad_token="<pad>", length=max_length)
        else:
            tok.enable_padding(pad_id=PAD, pad_token="<pad>")
        self.tok = tok

    def __call__(self, texts):
        encs = self.tok.encode_batch(texts)
        return {"input_ids": torch.tensor([e.ids for e in encs], dtype=torch.long),
                "attention_mask": torch.tensor([e.attention_mask for e in encs], dtype=torch.long)}


def build_rust_backend(vocab, merges):
    # The pipeline transformers 5's RobertaTokenizer builds (models/roberta/tokenization_roberta.py).
    from tokenizers import Tokenizer, decoders, pre_tokenizers, processors
    from tokenizers.models import BPE
    tok = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, continuing_subword_prefix="",
                        end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.RobertaProcessing(("</s>", EOS), ("<s>", BOS), trim_offsets=True,
                                                      add_prefix_space=False)
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    return tok


def make_tokenizer(max_length, padding, allow_hf=True):
    """-> (callable texts -> {input_ids, attention_mask}, name, notes). Each candidate must match the oracle."""
    notes = []
    try:
        vocab, merges = load_roberta_style_vocab()
    except Exception as e:  # noqa: BLE001  (the fixture is missing: keep the run, say so)
        notes.append(f"GPT-2 vocab not loadable: {e!r}")
        return HashTokenizer(max_length, padding), "hash-standin (no vocab)", notes
    oracle = PyRobertaBPE(vocab, merges, max_length, padding)
    want = oracle(SELF_CHECK_TEXTS)

    def matches(tok):
        got = tok(SELF_CHECK_TEXTS)
        return all(torch.equal(got[k].long(), want[k]) for k in ("input_ids", "attention_mask"))

    candidates = []
    if allow_hf:
        def hf():
            from transformers import RobertaTokenizer  # v5: the tokenizers-backed class (vocab=dict, merges=list)
            return HFTokenizer(RobertaTokenizer(vocab=dict(vocab), merges=list(merges)), max_length, padding)
        candidates.append(("transformers.RobertaTokenizer (GPT-2 vocab/merges)", hf))
    candidates.append(("tokenizers.Tokenizer BPE+ByteLevel+RobertaProcessing (GPT-2 vocab/merges)",
                       lambda: RustTokenizer(build_rust_backend(dict(vocab), list(merges)), max_length, padding)))
    for name, make in candidates:
        try:
            tok = make()
            if matches(tok):
                return tok, name, notes
            notes.append(f"{name}: output differs from the reference BPE; not used")
        except Exception as e:  # noqa: BLE001
            notes.append(f"{name}: {e!r}")
    return oracle, f"pure-Python byte-level BPE (GPT-2 vocab/merges, {oracle.regex})", notes


class HashTokenizer:
    """Last resort when no vocabulary is available: the output shape of the real one, not its cost."""

    def __init__(self, max_length, padding):
        self.max_length, self.padding = max_length, padding

    def __call__(self, texts):
        import zlib
        return pad_rows([[BOS] + [4 + zlib.crc32(w.encode()) % 50000 for w in t.split()][:self.max_length - 2] + [EOS]
                         for t in texts], self.max_length, self.padding)
