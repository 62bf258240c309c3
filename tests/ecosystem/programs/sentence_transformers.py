"""sentence-transformers: a SentenceTransformer assembled from a local tiny BERT, encode()."""

import os

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

from .._support import case, sample

WORDS = ("the cat dog sat on a mat runs fast slow bird sings sky blue red green tree under "
         "over house small big quick brown fox jumps lazy and is was".split())
SENTENCES = ["the cat sat on the mat", "a quick brown fox jumps over the lazy dog",
             "the bird sings", "sky is blue and tree is green", "unknownword here"]


def version():
    """The version of the library under test."""
    return sentence_transformers.__version__


def _model_dir(ctx):
    """The tiny BERT + WordPiece tokenizer folder (built and saved by real torch once)."""
    folder = ctx.path("tiny-bert")
    if ctx.recording and not os.path.exists(os.path.join(folder, "config.json")):
        from transformers import BertConfig, BertModel, BertTokenizer

        os.makedirs(folder, exist_ok=True)
        vocab = os.path.join(ctx.scratch, "vocab.txt")
        os.makedirs(ctx.scratch, exist_ok=True)
        with open(vocab, "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
        BertTokenizer(vocab_file=vocab).save_pretrained(folder)
        config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=4, intermediate_size=37,
                            max_position_embeddings=32)
        BertModel(config).save_pretrained(folder)
    return folder


@case
def encode(ctx):
    """encode() with mean pooling + normalization, as tensors and as NumPy; similarity."""
    folder = _model_dir(ctx)
    model = SentenceTransformer(modules=[Transformer(folder, max_seq_length=16),
                                         Pooling(32, pooling_mode="mean"), Normalize()],
                                device="cpu")
    emb = model.encode(SENTENCES, batch_size=2, convert_to_tensor=True)
    arr = model.encode(SENTENCES[:2])
    out = {"embeddings": emb, "numpy": arr, "dim": model.get_sentence_embedding_dimension(),
           "similarity": model.similarity(emb, emb), "numpy_type": type(arr).__name__,
           "tokens": model.tokenize(SENTENCES[:2])["input_ids"]}
    cls = SentenceTransformer(modules=[Transformer(folder), Pooling(32, pooling_mode="cls")],
                              device="cpu")
    with torch.no_grad():
        out["cls"] = sample(cls.encode(SENTENCES, convert_to_tensor=True))
    return out
