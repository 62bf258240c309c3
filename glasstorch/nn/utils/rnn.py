"""Packed and padded variable-length sequences (torch.nn.utils.rnn).

A ``PackedSequence`` stores the time steps of a batch sorted by decreasing length
back to back: ``data[offsets[t]:offsets[t] + batch_sizes[t]]`` holds step ``t`` of
the ``batch_sizes[t]`` sequences still running. Packing and unpacking are one
gather/scatter each (index arrays built with NumPy), recorded for autograd.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as _np

import glasstorch as _gt
from glasstorch._tensor import Tensor, _wrap
from glasstorch.autograd.graph import Node, needs_grad, record

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    p = permutation._data
    inv = _np.empty_like(p)
    inv[p] = _np.arange(p.size, dtype=p.dtype)
    return _wrap(inv)


class PackedSequence(_PackedSequenceBase):
    """Data and batch sizes of a packed batch of sequences (see ``pack_padded_sequence``)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of "
                                 "PackedSequence should never be created manually. They should "
                                 "be instantiated by functions like pack_sequence and "
                                 "pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn."
                                 "pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise TypeError("PackedSequence: expected (data, batch_sizes) when batch_sizes is "
                            "not given")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Move/cast ``data`` like ``Tensor.to``; the index tensors only follow the device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        si = None if self.sorted_indices is None else self.sorted_indices.to(dev)
        ui = None if self.unsorted_indices is None else self.unsorted_indices.to(dev)
        return type(self)(data, self.batch_sizes, si, ui)

    def cuda(self, *args, **kwargs):
        """Raises RuntimeError: glasstorch has no CUDA device."""
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        """The sequence with its data on the CPU (where it already is)."""
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        """The sequence with its data cast to float64."""
        return self.to(dtype=_gt.float64)

    def float(self):
        """The sequence with its data cast to float32."""
        return self.to(dtype=_gt.float32)

    def half(self):
        """The sequence with its data cast to float16."""
        return self.to(dtype=_gt.float16)

    def long(self):
        """The sequence with its data cast to int64."""
        return self.to(dtype=_gt.int64)

    def int(self):
        """The sequence with its data cast to int32."""
        return self.to(dtype=_gt.int32)

    def short(self):
        """The sequence with its data cast to int16."""
        return self.to(dtype=_gt.int16)

    def char(self):
        """The sequence with its data cast to int8."""
        return self.to(dtype=_gt.int8)

    def byte(self):
        """The sequence with its data cast to uint8."""
        return self.to(dtype=_gt.uint8)

    @property
    def is_cuda(self):
        """Always False (CPU only)."""
        return self.data.is_cuda

    def is_pinned(self):
        """Always False: there is no pinned memory without CUDA."""
        return False


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} "
                               f"{str(lengths.dtype)[6:]} tensor")
        return lengths._data.astype(_np.int64)
    return _np.asarray([int(x) for x in lengths], dtype=_np.int64)


def _pack_index(lengths, batch):
    """batch_sizes and, per packed row, the row of the (T*B)-flattened padded input."""
    T = int(lengths[0]) if lengths.size else 0
    steps = _np.arange(T)
    batch_sizes = (lengths[None, :] > steps[:, None]).sum(axis=1)
    # row t*B + b for every b < batch_sizes[t], in time-major order
    mask = _np.arange(batch)[None, :] < batch_sizes[:, None]
    rows = (steps[:, None] * batch + _np.arange(batch)[None, :])[mask]
    return batch_sizes.astype(_np.int64), rows


class PackPaddedSequenceBackward0(Node):
    def backward(self, grad):
        shape = self._saved_input_sizes
        full = grad.new_zeros((shape[0] * shape[1],) + tuple(shape[2:]))
        full = full.index_copy(0, self._saved_rows, grad).view(shape)
        if self._saved_batch_first:
            full = full.transpose(0, 1)
        return (full,)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (``T x B x *`` or ``B x T x *``) of sequences of ``lengths``."""
    la = _lengths_array(lengths)
    if enforce_sorted:
        if la.size > 1 and (_np.diff(la) > 0).any():
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = _np.argsort(-la, kind="stable")
        la = la[order]
        sorted_indices = _wrap(order.astype(_np.int64))
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if la.size and la[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    t_in = input.transpose(0, 1) if batch_first else input
    T, B = t_in.shape[0], t_in.shape[1]
    if la.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{la.size} (batch_size={B})")
    if la.size and la[0] > T:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the "
                           f"maximum length in lengths, but got {T} < {la[0]}")
    batch_sizes, rows = _pack_index(la, B)
    arr = t_in._data.reshape((T * B,) + t_in._data.shape[2:])
    data = _wrap(arr[rows])
    if needs_grad(input):
        # the node takes the (possibly sorted) padded input in its own layout
        record(data, PackPaddedSequenceBackward0, (input,),
               input_sizes=tuple(t_in.shape), rows=_wrap(rows), batch_first=batch_first)
    return PackedSequence(data, _wrap(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack a PackedSequence into a padded tensor and the lengths (int64) of its rows."""
    data, bs = sequence.data, sequence.batch_sizes._data.astype(_np.int64)
    T = bs.size
    B = int(bs[0]) if T else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {T}")
    Tout = T if total_length is None else int(total_length)
    mask = _np.arange(B)[None, :] < bs[:, None]
    rows = (_np.arange(T)[:, None] * B + _np.arange(B)[None, :])[mask]
    lengths = mask.sum(axis=0).astype(_np.int64)
    rest = tuple(data.shape[1:])
    full = data.new_full((Tout * B,) + rest, padding_value)
    padded = full.index_copy(0, _wrap(rows), data).view((Tout, B) + rest)
    if batch_first:
        padded = padded.transpose(0, 1)
    ui = sequence.unsorted_indices
    if ui is not None:
        padded = padded.index_select(0 if batch_first else 1, ui)
        lengths = lengths[ui._data]
    return padded, _wrap(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape ``L_i x *`` into ``L_max x B x *`` (or ``B x L_max x *``)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    L = max(s.shape[0] for s in sequences)
    rest = tuple(sequences[0].shape[1:])
    padded = []
    for s in sequences:
        n = L - s.shape[0]
        if n:
            pad = s.new_full((n,) + rest, padding_value)
            s = _gt.cat((s, pad) if padding_side == "right" else (pad, s), 0)
        padded.append(s)
    return _gt.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its unpadded sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    la = _lengths_array(lengths)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(la)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shape ``L_i x *`` (``pad_sequence`` then pack)."""
    lengths = _wrap(_np.asarray([s.shape[0] for s in sequences], dtype=_np.int64))
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of unpadded sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
