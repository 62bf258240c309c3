"""torchmetrics: classification and regression metrics accumulated over batches."""

import torch
import torchmetrics
from torchmetrics import MetricCollection
from torchmetrics.classification import (
    BinaryAUROC,
    BinaryF1Score,
    MulticlassAccuracy,
    MulticlassAUROC,
    MulticlassConfusionMatrix,
    MulticlassF1Score,
    MulticlassPrecision,
    MulticlassRecall,
)
from torchmetrics.regression import (
    MeanAbsoluteError,
    MeanSquaredError,
    PearsonCorrCoef,
    R2Score,
    SpearmanCorrCoef,
)

from .._support import case, randint, randn

BATCHES = 3


def version():
    """The version of the library under test."""
    return torchmetrics.__version__


def _batches(seed, classes=4, n=8):
    for i in range(BATCHES):
        logits = randn(seed + i, n, classes)
        yield logits.softmax(-1), randint(seed + 100 + i, classes, n)


@case
def classification(ctx):
    """Multiclass metrics: per-batch forward values and the accumulated compute()."""
    metrics = {
        "acc": MulticlassAccuracy(num_classes=4),
        "acc_micro": MulticlassAccuracy(num_classes=4, average="micro"),
        "f1": MulticlassF1Score(num_classes=4, average="macro"),
        "precision": MulticlassPrecision(num_classes=4, average="weighted"),
        "recall": MulticlassRecall(num_classes=4, average=None),
        "auroc": MulticlassAUROC(num_classes=4),
        "confmat": MulticlassConfusionMatrix(num_classes=4),
    }
    out = {}
    for i, (probs, target) in enumerate(_batches(0)):
        for name, metric in metrics.items():
            out[f"{name}.batch{i}"] = metric(probs, target)
    for name, metric in metrics.items():
        out[f"{name}.compute"] = metric.compute()
    metrics["acc"].reset()
    probs, target = next(_batches(50))
    metrics["acc"].update(probs, target)
    out["acc.after_reset"] = metrics["acc"].compute()
    return out


@case
def binary(ctx):
    """Binary F1 on thresholded probabilities and AUROC on scores."""
    f1, auroc = BinaryF1Score(), BinaryAUROC()
    out = {}
    for i in range(BATCHES):
        scores = randn(10 + i, 16).sigmoid()
        target = randint(20 + i, 2, 16)
        f1.update(scores, target)
        auroc.update(scores, target)
    out["f1"] = f1.compute()
    out["auroc"] = auroc.compute()
    return out


@case
def regression(ctx):
    """Regression metrics over batches, including the ones with running moments."""
    metrics = {"mse": MeanSquaredError(), "rmse": MeanSquaredError(squared=False),
               "mae": MeanAbsoluteError(), "r2": R2Score(), "pearson": PearsonCorrCoef(),
               "spearman": SpearmanCorrCoef()}
    out = {}
    for i in range(BATCHES):
        target = randn(30 + i, 10)
        preds = target + 0.5 * randn(40 + i, 10)
        for name, metric in metrics.items():
            out[f"{name}.batch{i}"] = metric(preds, target)
    for name, metric in metrics.items():
        out[f"{name}.compute"] = metric.compute()
    return out


@case
def collection(ctx):
    """MetricCollection with prefix, compute groups and clone()."""
    coll = MetricCollection({"acc": MulticlassAccuracy(num_classes=4),
                             "f1": MulticlassF1Score(num_classes=4),
                             "prec": MulticlassPrecision(num_classes=4)}, prefix="val_")
    train = coll.clone(prefix="train_")
    out = {}
    for probs, target in _batches(60):
        coll.update(probs, target)
        batch = train(probs, target)
    for key, value in sorted(coll.compute().items()):
        out[key] = value
    for key, value in sorted(batch.items()):
        out["last." + key] = value
    out["keys"] = ",".join(sorted(coll.keys()))
    out["device_dtype"] = f"{coll['acc'].device} {torch.get_default_dtype()}"
    return out
