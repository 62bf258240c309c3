"""``SummaryWriter`` with torch.utils.tensorboard's signature, writing through tensorboardX.

tensorboardX (``pip install tensorboardX``) is an optional dependency, imported when the first
writer is created. glasstorch tensors are converted to NumPy arrays here, before they reach
tensorboardX (which would otherwise mistake them for real torch tensors and import torch).
"""

import os
import socket
import sys
import time
from datetime import datetime

__all__ = ["SummaryWriter"]


def _tbx():
    # tensorboardX's writer module tries `import torch` (only for a type annotation): when the
    # real torch is installed that costs seconds and loads a second framework into a
    # glasstorch program, so that one import is made to fail (tensorboardX handles that).
    block = "tensorboardX.writer" not in sys.modules and "torch" not in sys.modules
    if block:
        sys.modules["torch"] = None
    try:
        import tensorboardX
    except ImportError as e:
        raise ImportError(
            "glasstorch.utils.tensorboard.SummaryWriter writes event files through the "
            "tensorboardX package, which is not installed: pip install tensorboardX") from e
    finally:
        if block and "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return tensorboardX


def _np(value):
    """A glasstorch tensor (or a list/tuple of them) as a NumPy array; anything else unchanged.

    float16/bfloat16 become float32: NumPy and tensorboardX's summaries do not handle bfloat16.
    """
    from glasstorch._tensor import Tensor

    if isinstance(value, Tensor):
        arr = value.detach().numpy()
        if arr.dtype.itemsize == 2 and arr.dtype.kind in "fV":  # float16, bfloat16
            arr = arr.astype("float32")
        return arr
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
        import numpy
        return numpy.stack([_np(v) for v in value])
    return value


def _scalar(value):
    """A python number from a number, a 0-d/1-element tensor or a NumPy scalar."""
    value = _np(value)
    if hasattr(value, "item"):
        return value.item()
    return value


class SummaryWriter:
    """Writes TensorBoard event files into ``log_dir`` (torch.utils.tensorboard.SummaryWriter).

    ``log_dir`` defaults to ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>`` like torch's.
    Usable as a context manager; ``close()`` flushes and closes the files.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        tbx = _tbx()
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._writer = tbx.SummaryWriter(
            logdir=log_dir, purge_step=purge_step, max_queue=max_queue, flush_secs=flush_secs,
            filename_suffix=filename_suffix)
        self._scalars_writers = {}  # add_scalars' sub-run writers, by directory

    def get_logdir(self):
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one scalar (a number or a one-element tensor) under ``tag``.

        ``new_style``/``double_precision`` are accepted; the value is always written as a
        classic ``simple_value`` scalar, which TensorBoard shows the same way."""
        self._writer.add_scalar(tag, _scalar(scalar_value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several scalars on one chart; each goes to the run ``<log_dir>/<main_tag>_<tag>``
        as in torch."""
        # tensorboardX names the sub-runs <main_tag>/<tag>; torch's layout is kept instead
        from tensorboardX.summary import scalar
        from tensorboardX.writer import FileWriter

        for tag, value in tag_scalar_dict.items():
            fw_tag = self.log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self._scalars_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self._scalars_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, _scalar(value)), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log a histogram of ``values`` (tensor or array); ``bins`` as in numpy.histogram, or
        ``"tensorflow"`` for TensorBoard's default exponential buckets."""
        self._writer.add_histogram(tag, _np(values), global_step, bins, walltime, max_bins)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log one image: float values in [0, 1] or uint8 in [0, 255], layout ``dataformats``
        (``CHW``, ``HWC``, ``HW``)."""
        self._writer.add_image(tag, _np(img_tensor), global_step, walltime, dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images, tiled into one grid (layout ``dataformats``; a list of
        ``CHW``/``HWC`` images is stacked into one batch)."""
        if isinstance(img_tensor, (list, tuple)) and dataformats.upper() in ("CHW", "HWC"):
            import numpy
            img_tensor = numpy.stack([_np(img) for img in img_tensor])
            dataformats = "N" + dataformats
        self._writer.add_images(tag, _np(img_tensor), global_step, walltime, dataformats)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render a matplotlib figure (or a list of them) and log it as an image."""
        self._writer.add_figure(tag, figure, global_step, close, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a (markdown) text string."""
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log a hyper-parameter set and its metrics into the sub-run ``run_name`` (default:
        the current time), as torch does.

        ``hparam_domain_discrete`` is checked as torch checks it but not written: tensorboardX's
        hparams protocol has no discrete domains."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        if hparam_domain_discrete is not None:
            if not isinstance(hparam_domain_discrete, dict):
                raise TypeError("parameter: hparam_domain_discrete should be a dictionary, "
                                f"got {type(hparam_domain_discrete).__name__}")
            for k, v in hparam_domain_discrete.items():
                if k not in hparam_dict or not isinstance(v, list) \
                        or not all(isinstance(d, type(hparam_dict[k])) for d in v):
                    raise TypeError(
                        f"parameter: hparam_domain_discrete[{k}] should be a list of same type "
                        f"as hparam_dict[{k}].")
        hparams = {k: _scalar(v) for k, v in hparam_dict.items()}
        metrics = {k: _scalar(v) for k, v in metric_dict.items()}
        self._writer.add_hparams(hparams, metrics, name=run_name or str(time.time()),
                                 global_step=global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Log a precision-recall curve from 0/1 ``labels`` and ``predictions`` in [0, 1]."""
        self._writer.add_pr_curve(tag, _np(labels), _np(predictions), global_step,
                                  num_thresholds, _np(weights), walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Log an embedding matrix (N x D) for the projector, with optional labels/images."""
        self._writer.add_embedding(_np(mat), metadata, _np(label_img), global_step, tag,
                                   metadata_header)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not available: drawing a model graph needs a tracer (torch.jit.trace), which
        glasstorch does not have."""
        raise NotImplementedError(
            "SummaryWriter.add_graph is not implemented in glasstorch (yet): it needs a model "
            "tracer (torch.jit.trace), which glasstorch does not have; log scalars, "
            "histograms and images instead")

    def flush(self):
        """Write pending events to disk."""
        self._writer.flush()
        for fw in self._scalars_writers.values():
            fw.flush()

    def close(self):
        """Flush and close the event files."""
        self._writer.close()
        for fw in self._scalars_writers.values():
            fw.close()
        self._scalars_writers.clear()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
