"""transformers: tiny BERT, GPT-2, Llama, T5, BART, ViT and Whisper forward/backward (generate
for the decoders), and Trainer steps."""

import torch
import transformers
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertForMaskedLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
    ViTConfig,
    ViTForImageClassification,
    WhisperConfig,
    WhisperForConditionalGeneration,
)

from .._support import case, grads, randint, randn, sample

VOCAB = 99


def version():
    """The version of the library under test."""
    return transformers.__version__


def bert_config():
    """A 2-layer BERT of hidden size 32 (dropout off: the comparison shares no RNG)."""
    return BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=37, max_position_embeddings=64,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def gpt2_config():
    """A 2-layer GPT-2 of width 32."""
    return GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                      bos_token_id=1, eos_token_id=2, pad_token_id=0)


def llama_config():
    """A 2-layer Llama with grouped-query attention (4 heads, 2 key/value heads) and RoPE."""
    return LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=64, bos_token_id=1, eos_token_id=2,
                       pad_token_id=0)


def t5_config():
    """A 2+2-layer T5 encoder-decoder of width 32 (relative position buckets, no dropout)."""
    return T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4,
                    dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0,
                    eos_token_id=1)


def _forward_backward(model, ids, mask, labels, names):
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.loss.backward()
    result = {"logits": sample(out.logits), "loss": out.loss}
    result.update(grads(model, *names))
    return result


@case
def bert(ctx):
    """BertForMaskedLM with padding in the attention mask: logits, loss, gradients."""
    model = ctx.weights(BertForMaskedLM(bert_config()), "bert")
    model.eval()
    ids = randint(0, VOCAB, 2, 10)
    mask = torch.ones(2, 10, dtype=torch.long)
    mask[1, 7:] = 0
    labels = torch.full((2, 10), -100, dtype=torch.long)
    labels[:, 3] = ids[:, 3]
    labels[0, 5] = ids[0, 5]
    return _forward_backward(model, ids, mask, labels, [
        "bert.embeddings.word_embeddings.weight",
        "bert.encoder.layer.0.attention.self.query.weight",
        "bert.encoder.layer.1.output.dense.weight", "cls.predictions.transform.dense.weight"])


@case
def gpt2(ctx):
    """GPT2LMHeadModel: causal LM loss, gradients, greedy generate()."""
    model = ctx.weights(GPT2LMHeadModel(gpt2_config()), "gpt2")
    model.eval()
    ids = randint(1, VOCAB, 2, 8)
    out = _forward_backward(model, ids, torch.ones_like(ids), ids,
                            ["transformer.wte.weight", "transformer.h.0.attn.c_attn.weight",
                             "transformer.h.1.mlp.c_proj.weight"])
    with torch.no_grad():
        out["generated"] = model.generate(ids[:, :4], attention_mask=torch.ones(2, 4,
                                          dtype=torch.long), max_new_tokens=6,
                                          do_sample=False, pad_token_id=0)
    return out


@case
def from_pretrained(ctx):
    """save_pretrained, then from_pretrained (which builds the model on the meta device and
    assigns the weights), and accelerate's init_empty_weights + load_checkpoint_and_dispatch
    of the same checkpoint."""
    import os

    from accelerate import init_empty_weights, load_checkpoint_and_dispatch

    folder = ctx.tmpdir("gpt2_pretrained")
    ctx.weights(GPT2LMHeadModel(gpt2_config()), "gpt2").save_pretrained(folder)
    loaded = GPT2LMHeadModel.from_pretrained(folder).eval()
    with init_empty_weights():
        empty = GPT2LMHeadModel(gpt2_config())
    out = {"empty_weight": repr(empty.transformer.h[0].attn.c_attn.weight)}
    empty.tie_weights()
    dispatched = load_checkpoint_and_dispatch(empty, os.path.join(folder, "model.safetensors"),
                                              device_map={"": "cpu"}).eval()
    out["devices"] = repr(sorted({p.device.type for p in dispatched.parameters()}))
    ids = randint(1, VOCAB, 2, 8)
    with torch.no_grad():
        out["from_pretrained_logits"] = loaded(ids).logits
        out["dispatched_logits"] = dispatched(ids).logits
    return out


@case
def llama(ctx):
    """LlamaForCausalLM: RMSNorm, RoPE, GQA; loss, gradients, greedy generate with a cache."""
    model = ctx.weights(LlamaForCausalLM(llama_config()), "llama")
    model.eval()
    ids = randint(2, VOCAB, 2, 8)
    out = _forward_backward(model, ids, torch.ones_like(ids), ids,
                            ["model.embed_tokens.weight",
                             "model.layers.0.self_attn.k_proj.weight",
                             "model.layers.1.mlp.gate_proj.weight", "lm_head.weight"])
    with torch.no_grad():
        out["generated"] = model.generate(ids[:, :3], attention_mask=torch.ones(2, 3,
                                          dtype=torch.long), max_new_tokens=6,
                                          do_sample=False, pad_token_id=0)
    return out


@case
def t5(ctx):
    """T5ForConditionalGeneration: padded encoder input, seq2seq loss with an ignored label,
    gradients, greedy generate()."""
    model = ctx.weights(T5ForConditionalGeneration(t5_config()), "t5")
    model.eval()
    ids = randint(3, VOCAB, 2, 7)
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    labels = randint(4, VOCAB, 2, 5)
    labels[1, 4] = -100
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.loss.backward()
    result = {"logits": sample(out.logits), "loss": out.loss}
    result.update(grads(model, "shared.weight", "encoder.block.0.layer.0.SelfAttention.q.weight",
                        "decoder.block.1.layer.1.EncDecAttention.v.weight",
                        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"))
    with torch.no_grad():
        result["generated"] = model.generate(ids, attention_mask=mask, max_new_tokens=5,
                                             do_sample=False)
    return result


@case
def bart(ctx):
    """BartForConditionalGeneration: learned positions, shifted decoder inputs, loss,
    gradients."""
    config = BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=4, decoder_attention_heads=4,
                        encoder_ffn_dim=37, decoder_ffn_dim=37, dropout=0.0,
                        max_position_embeddings=40)
    model = ctx.weights(BartForConditionalGeneration(config), "bart")
    model.eval()
    out = model(input_ids=randint(5, VOCAB, 2, 7), labels=randint(6, VOCAB, 2, 5))
    out.loss.backward()
    result = {"logits": sample(out.logits), "loss": out.loss}
    result.update(grads(model, "model.shared.weight",
                        "model.encoder.layers.0.self_attn.k_proj.weight",
                        "model.decoder.layers.0.encoder_attn.out_proj.weight"))
    return result


@case
def vit(ctx):
    """ViTForImageClassification: patch embedding convolution, CLS token, loss, gradients."""
    config = ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32,
                       num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                       num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = ctx.weights(ViTForImageClassification(config), "vit")
    model.eval()
    out = model(pixel_values=randn(7, 2, 3, 16, 16), labels=torch.tensor([0, 2]))
    out.loss.backward()
    result = {"logits": out.logits, "loss": out.loss}
    result.update(grads(model, "vit.embeddings.patch_embeddings.projection.weight",
                        "vit.embeddings.cls_token", "vit.layers.1.mlp.fc2.weight",
                        "classifier.weight"))
    return result


@case
def whisper(ctx):
    """WhisperForConditionalGeneration: conv1d audio encoder, decoder loss, gradients."""
    config = WhisperConfig(vocab_size=VOCAB, num_mel_bins=8, d_model=32, encoder_layers=1,
                           decoder_layers=1, encoder_attention_heads=4,
                           decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37,
                           max_source_positions=10, max_target_positions=20, dropout=0.0,
                           pad_token_id=0, decoder_start_token_id=1, eos_token_id=2,
                           bos_token_id=1)
    model = ctx.weights(WhisperForConditionalGeneration(config), "whisper")
    model.eval()
    out = model(input_features=randn(8, 2, 8, 20), labels=randint(9, VOCAB, 2, 5))
    out.loss.backward()
    result = {"logits": sample(out.logits), "loss": out.loss}
    result.update(grads(model, "model.encoder.conv1.weight", "model.encoder.conv2.weight",
                        "model.decoder.layers.0.encoder_attn.q_proj.weight"))
    return result


class _Dataset(torch.utils.data.Dataset):
    """Eight fixed token sequences for causal LM training."""

    def __init__(self):
        self.ids = randint(7, VOCAB, 8, 12)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


@case
def trainer(ctx):
    """Trainer: three AdamW steps with a linear schedule on GPT-2, sequential sampling."""
    # imported here: the Trainer imports peft and the training integrations, whose own
    # blockers must not stop the model cases
    from transformers import Trainer, TrainingArguments

    model = ctx.weights(GPT2LMHeadModel(gpt2_config()), "gpt2")
    args = TrainingArguments(
        output_dir=ctx.tmpdir("trainer"), max_steps=3, per_device_train_batch_size=4,
        learning_rate=1e-2, logging_steps=1, report_to="none", save_strategy="no",
        use_cpu=True, seed=0, train_sampling_strategy="sequential", disable_tqdm=True,
        dataloader_num_workers=0, warmup_steps=1)
    trainer = Trainer(model=model, args=args, train_dataset=_Dataset())
    result = trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    out = {"losses": [h["loss"] for h in logs],
           "learning_rates": [h["learning_rate"] for h in logs],
           "grad_norms": [h["grad_norm"] for h in logs],
           "train_loss": result.training_loss, "global_step": trainer.state.global_step}
    params = dict(model.named_parameters())
    for name in ("transformer.wte.weight", "transformer.h.1.attn.c_proj.weight"):
        out["param." + name] = sample(params[name])
    return out
