"""peft: LoRA on a tiny GPT-2, one training step, save/load the adapter, merge_and_unload."""

import copy

import peft
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

from .._support import case, grads, randint, sample


def version():
    """The version of the library under test."""
    return peft.__version__


def _base():
    return GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2,
                                      n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))


@case
def lora(ctx):
    """get_peft_model -> train step -> save/load adapter -> merge_and_unload, all agreeing."""
    base = ctx.weights(_base(), "lora_base")
    fresh_base = copy.deepcopy(base)
    # init_lora_weights=False: B is not zero, so the adapter changes the outputs from the start
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn", "c_fc"], lora_dropout=0.0,
                        fan_in_fan_out=True, init_lora_weights=False, task_type="CAUSAL_LM")
    model = get_peft_model(base, config)
    ctx.weights(model, "lora")
    trainable, total = model.get_nb_trainable_parameters()
    ids = randint(0, 64, 2, 9)
    model.train()
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    result = {"trainable": trainable, "total": total, "trainable_names": "\n".join(names),
              "logits": sample(out.logits), "loss": out.loss}
    result.update(grads(model, names[0], names[1], names[-1]))
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    result["frozen_grad_is_none"] = all(dict(model.named_parameters())[n].grad is None
                                        for n in frozen)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    opt.step()
    model.eval()
    with torch.no_grad():
        adapted = model(input_ids=ids).logits
    result["adapted"] = sample(adapted)
    folder = ctx.tmpdir("adapter")
    model.save_pretrained(folder)
    reloaded = PeftModel.from_pretrained(fresh_base, folder)
    reloaded.eval()
    with torch.no_grad():
        result["reloaded"] = sample(reloaded(input_ids=ids).logits)
        merged = model.merge_and_unload()
        result["merged"] = sample(merged(input_ids=ids).logits)
    result["merged_type"] = type(merged).__name__
    result["merged_has_lora"] = any("lora" in n for n, _ in merged.named_parameters())
    return result
