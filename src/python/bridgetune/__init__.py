"""bridgetune's C++ media pipeline as a PyTorch data loader.

    import bridgetune
    loader = bridgetune.DataLoader("data/train", batch_size=32, tokenizer="model_dir", preprocessor="model_dir")
    # or a hub id in the local Hugging Face cache: tokenizer="BridgeTower/bridgetower-large-itm-mlm-itc", ...
    for epoch in range(3):
        loader.set_epoch(epoch)
        for batch in loader:          # {"pixel_values": [B,3,S,S] float32, "input_ids", "attention_mask": [B,L] int64}
            loss = model(**batch, return_loss=True).loss

Batches are produced by C++ worker threads (no Python processes, the GIL released while they work) and reach
torch through DLPack without a copy. The module links no libtorch: it works with whatever torch is installed.
"""
from ._native import Error  # noqa: F401  (a RuntimeError carrying the one-line reason, naming the file)
from .index import Index, load_index  # noqa: F401  (what `bridgetune encode` writes)
from .loader import DataLoader  # noqa: F401
from .preprocessing import Tokenizer, preprocess, sample_seed  # noqa: F401

__all__ = ["DataLoader", "Tokenizer", "preprocess", "sample_seed", "Error", "Index", "load_index"]
