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
import sys as _sys


def _unusable_here(missing):
    """One line naming what this interpreter lacks and the interpreter the package was built for."""
    from ._build import PYTHON as built_for
    return ImportError(f"bridgetune: {_sys.executable} cannot use this build ({missing}); it was built for "
                       f"{built_for}: run that interpreter, or rebuild with PYTHON={_sys.executable} "
                       f"(make build) after installing numpy for it")


try:
    import numpy  # noqa: F401  (the loader hands batches over as numpy/DLPack arrays)
except ImportError:
    raise _unusable_here("no module named numpy") from None
try:
    from ._native import Error  # noqa: F401  (a RuntimeError carrying the one-line reason, naming the file)
except ImportError as e:
    raise _unusable_here(f"its native extension does not load: {e}") from None
from . import metrics  # noqa: F401  (retrieval / matching scores from embeddings; bridgetune.hf: HF Trainer)
from .index import Index, load_index  # noqa: F401  (what `bridgetune encode` writes)
from .loader import DataLoader  # noqa: F401
from .preprocessing import Tokenizer, preprocess, sample_seed  # noqa: F401

__all__ = ["DataLoader", "Tokenizer", "preprocess", "sample_seed", "Error", "Index", "load_index", "metrics"]
