"""pytorch_lightning: fit/validate/test/predict with ModelCheckpoint, then resume from it."""

import os

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import ModelCheckpoint
from torch import nn

from .._support import case, randn, sample


def version():
    """The version of the library under test."""
    return pl.__version__


class Regressor(pl.LightningModule):
    """A small MLP regressor that logs its losses."""

    def __init__(self, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
        self.seen = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        self.seen.append(float(loss))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_mae", (self(x) - y).abs().mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self(batch[0])

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        return {"optimizer": opt,
                "lr_scheduler": torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)}


def _loader(seed, n=24):
    x = randn(seed, n, 5)
    y = x[:, :2].sum(dim=1, keepdim=True).sin()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)


def _trainer(folder, epochs, callbacks=()):
    return pl.Trainer(max_epochs=epochs, accelerator="cpu", devices=1, logger=False,
                      enable_progress_bar=False, default_root_dir=folder,
                      callbacks=list(callbacks), num_sanity_val_steps=0)


@case
def fit_resume(ctx):
    """fit 2 epochs with checkpoints; validate/test/predict; resume to 3 epochs from last.ckpt."""
    folder = ctx.tmpdir("lightning")
    model = Regressor()
    ctx.weights(model, "regressor")
    ckpt = ModelCheckpoint(dirpath=os.path.join(folder, "ckpt"), monitor="val_loss",
                           save_last=True, save_top_k=1, filename="best-{epoch}")
    trainer = _trainer(folder, 2, [ckpt])
    trainer.fit(model, _loader(0), _loader(1))
    out = {"train_losses": model.seen, "global_step": trainer.global_step,
           "val_loss": trainer.callback_metrics["val_loss"],
           "best_score": ckpt.best_model_score,
           "best_name": os.path.basename(ckpt.best_model_path),
           "checkpoints": ",".join(sorted(os.listdir(os.path.join(folder, "ckpt"))))}
    out["validate"] = trainer.validate(model, _loader(1), verbose=False)[0]["val_loss"]
    out["test"] = trainer.test(model, _loader(2), verbose=False)[0]["test_mae"]
    out["predict"] = torch.cat(trainer.predict(model, _loader(3)))
    out["weight_epoch2"] = sample(model.net[0].weight)

    resumed = Regressor()
    trainer2 = _trainer(folder, 3)
    trainer2.fit(resumed, _loader(0), _loader(1), ckpt_path=os.path.join(folder, "ckpt",
                                                                           "last.ckpt"))
    out["resumed_losses"] = resumed.seen
    out["resumed_step"] = trainer2.global_step
    out["resumed_lr"] = trainer2.optimizers[0].param_groups[0]["lr"]
    out["weight_epoch3"] = sample(resumed.net[0].weight)
    loaded = Regressor.load_from_checkpoint(ckpt.best_model_path)
    out["best_hparams"] = repr(dict(loaded.hparams))
    out["best_weight"] = sample(loaded.net[2].weight)
    return out
