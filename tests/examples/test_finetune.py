"""The fine-tuning example: a step with a frozen backbone matches PyTorch and leaves the
backbone (weights and BatchNorm statistics) bit-for-bit unchanged; a short run transfers, and
its checkpoints prove the backbone never moved."""

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import finetune
from tests.examples.test_vae import (
    as_pytorch,
    assert_close,
    assert_same_grads_and_weights,
    copy_weights,
    to_torch,
)

torch = pytest.importorskip("torch")


def backbone_state(state_dict):
    return {k: v for k, v in state_dict.items() if k.startswith("backbone.")}


def assert_backbones_identical(a, b):
    a, b = backbone_state(a), backbone_state(b)
    assert a.keys() == b.keys() and any(k.endswith("running_mean") for k in a)
    for key in a:
        assert np.array_equal(np.asarray(a[key]), np.asarray(b[key])), key


def test_frozen_backbone_step_matches_pytorch():
    glasstorch.manual_seed(0)
    x, y = finetune.load_digits()[:2]
    x, y = x[:24], y[:24] % 5
    model = finetune.DigitsNet()
    model.train()
    with glasstorch.no_grad():
        model(x)  # BatchNorm running statistics that are not the initial ones
    head = finetune.freeze_backbone_and_replace_head(model, 5)
    twin_module = as_pytorch("finetune")
    twin = twin_module.DigitsNet()
    twin_head = twin_module.freeze_backbone_and_replace_head(twin, 5)
    copy_weights(model, twin)
    before = {k: v.clone() for k, v in model.state_dict().items()}

    finetune.set_train_mode(model)
    twin_module.set_train_mode(twin)
    assert not model.backbone.training and model.head.training and not twin.backbone.training
    ours = finetune.train_step(model, glasstorch.optim.SGD(head.parameters(), lr=0.5), x, y)
    theirs = twin_module.train_step(twin, torch.optim.SGD(twin_head.parameters(), lr=0.5),
                                    to_torch(x), to_torch(y))
    for a, b in zip(ours, theirs):  # loss, logits
        assert_close(a, b)
    assert_same_grads_and_weights(model, twin)  # backbone grads are None in both
    assert all(p.grad is None for p in model.backbone.parameters())
    assert head.weight.grad is not None
    assert_backbones_identical(before, model.state_dict())
    assert_backbones_identical({k: v.numpy() for k, v in twin.state_dict().items()},
                               model.state_dict())
    assert not glasstorch.equal(before["head.weight"], model.head.weight)


def test_train_mode_without_a_frozen_backbone_is_plain_train_mode():
    model = finetune.DigitsNet()
    model.eval()
    finetune.set_train_mode(model)
    assert all(m.training for m in model.modules())
    finetune.freeze_backbone_and_replace_head(model, 3)
    finetune.set_train_mode(model)
    assert not any(m.training for m in model.backbone.modules())
    assert model.head.out_features == 3 and model.head.in_features == 128


def test_short_run_transfers_and_backbone_stays_put(tmp_path, capsys):
    out = tmp_path / "run"
    result = finetune.main(["--epochs", "2", "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert "fine-tune epoch  2" in printed and "unchanged bit-for-bit: True" in printed
    assert result["pretrain_acc"] > 0.9
    assert result["finetune_acc"] > 0.8 and result["finetune_acc"] > result["random_backbone_acc"]
    assert result["backbone_unchanged"] is True
    assert result["trainable_params"] == 128 * 5 + 5 < result["total_params"]

    pretrained = glasstorch.load(result["backbone"])
    finetuned = glasstorch.load(result["checkpoint"])
    assert_backbones_identical(pretrained["model"], finetuned["model"])
    assert not glasstorch.equal(pretrained["model"]["head.weight"],
                                finetuned["model"]["head.weight"])
    model = finetune.DigitsNet()
    model.load_state_dict(finetuned["model"])
    _, _, x_test, y_test = finetune.load_digits()
    second = finetune.task_split(x_test, y_test, finetune.SECOND_TASK)
    assert finetune.accuracy(model, *second) == pytest.approx(finetuned["finetune_acc"])

    # --backbone reuses the pretrained network instead of training one
    again = finetune.main(["--epochs", "1", "--out", str(tmp_path / "again"), "--no-progress",
                           "--backbone", result["backbone"]])
    assert "pretrain epoch" not in capsys.readouterr().out
    assert again["pretrain_acc"] == result["pretrain_acc"]
    assert_backbones_identical(pretrained["model"], glasstorch.load(again["checkpoint"])["model"])


def test_task_split():
    _, _, x_test, y_test = finetune.load_digits()
    x, y = finetune.task_split(x_test, y_test, finetune.SECOND_TASK)
    assert len(x) == len(y) == int(((y_test >= 5)).sum())
    assert sorted(set(y.tolist())) == [0, 1, 2, 3, 4]
    assert glasstorch.equal(x[y == 0], x_test[y_test == 5])


def test_example_runs_on_pytorch(tmp_path):
    result = as_pytorch("finetune").main(["--epochs", "1", "--out", str(tmp_path / "run"),
                                          "--no-progress"])
    assert result["backbone_unchanged"] is True and result["finetune_acc"] > 0.5
    pretrained = torch.load(result["backbone"])["model"]
    finetuned = torch.load(result["checkpoint"])["model"]
    assert isinstance(finetuned["backbone.1.running_var"], torch.Tensor)
    assert_backbones_identical(pretrained, finetuned)
