"""FlexAttention: attention whose scores a Python function modifies, as
torch.nn.attention.flex_attention.

``flex_attention(q, k, v, score_mod, block_mask)`` computes
``softmax(where(mask, score_mod(q k^T * scale, b, h, q_idx, kv_idx), -inf)) v``. glasstorch
computes it as torch's reference implementation does, built from tensor operators (so it is
differentiable): the full score matrix is materialized, and ``score_mod``/``mask_mod`` are
called once with index tensors that broadcast against it (``b`` of shape (B, 1, 1, 1), ``h``
(1, H, 1, 1), ``q_idx`` (1, 1, L, 1), ``kv_idx`` (1, 1, 1, S)) where torch vmaps them over
scalars: a function written for scalars with tensor operations and indexing works the
same way. A :class:`BlockMask` (from :func:`create_block_mask`) carries the mask both as its
``mask_mod`` and as the block-sparse layout GPU kernels skip blocks with; on the CPU, as in
torch, the ``mask_mod`` alone decides. Unlike torch on the CPU (which refuses), gradients
are supported.
"""

from __future__ import annotations

import enum
import functools
import inspect
import itertools
import math
import operator
import warnings
from collections.abc import Callable
from typing import NamedTuple, TypedDict

import glasstorch
from glasstorch import Tensor

from ..._ops.attention import _safe_softmax

__all__ = [
    "AuxOutput", "AuxRequest", "BlockMask", "FlexKernelOptions", "and_masks",
    "create_block_mask", "create_mask", "flex_attention", "noop_mask", "or_masks",
]

# set to True to skip the one-time warning about the unfused implementation
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

_WARNINGS_SHOWN: set = set()

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


def _warn_once(key, message, category=UserWarning):
    if key not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(key)


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of torch's fused FlexAttention kernels (block sizes, warps, stages,
    ``PRESCALE_QK``, ``BACKEND``...). glasstorch validates ``BACKEND`` as torch does;
    the tuning options do not change its (unfused) computation."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: str


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention(..., return_aux=...)`` should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of ``flex_attention``: the log-sum-exp and the maximum of each
    row's modified scores (None where not requested)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(enum.Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn):
    """A score_mod takes 5 positional arguments (score, b, h, q_idx, kv_idx), a mask_mod 4."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        count = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        count = sum(1 for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty)
    if count not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {count}")
    return _ModificationType.SCORE_MOD if count == 5 else _ModificationType.MASK_MOD


def _identity(score, batch, head, token_q, token_kv):
    return score


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that masks nothing."""
    return glasstorch.ones((), dtype=glasstorch.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
        "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!")


# ------------------------------------------------------------------ block layout helpers
# A block layout is "ordered": per row of blocks, how many blocks are present and their
# column indices (present ones first, in ascending order); rows and columns are blocks.

def _ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    """The 0/1 (int32) matrix of present blocks, ``(*batch, rows, num_cols)``."""
    entries = col_indices.shape[-1]
    used = glasstorch.arange(entries, dtype=glasstorch.int32) < num_blocks_in_row.unsqueeze(-1)
    # unused slots write into one extra column, cut off below
    cols = glasstorch.where(used, col_indices, num_cols).to(glasstorch.int64)
    dense = glasstorch.zeros(*col_indices.shape[:-1], num_cols + 1, dtype=glasstorch.int32)
    dense.scatter_(-1, cols, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense_mask):
    dense_mask = dense_mask.to(dtype=glasstorch.int32)
    num_blocks = dense_mask.sum(dim=-1)
    cols = glasstorch.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks.to(glasstorch.int32), cols.to(glasstorch.int32)


def _transpose_ordered(num_blocks_in_row, col_indices):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks, indices, new_rows, new_cols):
    indices = indices[:, :, :new_rows, :new_cols]
    num_blocks = num_blocks[:, :, :new_rows].clamp(max=new_cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(glasstorch.int32)
    return num_blocks, indices


def _broadcast_to_dim(x, dim):
    while x.dim() < dim:
        x = x.unsqueeze(0)
    return x


def _round_up_to_multiple(x, multiple):
    return (x + multiple - 1) // multiple * multiple


class BlockMask:
    """A block-sparse attention mask: which ``BLOCK_SIZE[0] x BLOCK_SIZE[1]`` tiles of the
    (query, key) score matrix are computed, plus the ``mask_mod`` applied inside them.

    Per batch and head it stores, for each row of query blocks, the number of key blocks
    to visit (``kv_num_blocks``) and their indices (``kv_indices``), optionally split off
    the blocks needing no masking at all (``full_kv_num_blocks``/``full_kv_indices``), and
    the same transposed (``q_num_blocks``, ``q_indices``, ...), as torch's BlockMask.
    """

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
                     "dq_write_order", "dq_write_order_full", "dq_kv_order"]

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod=noop_mask, *, dq_write_order=None, dq_write_order_full=None,
                 dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided "
                                 "or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided "
                                 "or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        # metadata of torch's deterministic CUDA backward: carried along, unused here
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, *,
                       dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its key-block layout (the query-block layout is derived);
        ``seq_lengths`` defaults to the number of blocks times ``BLOCK_SIZE``."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided "
                                 "or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths=seq_lengths, kv_num_blocks=kv_num_blocks,
                   kv_indices=kv_indices, full_kv_num_blocks=full_kv_num_blocks,
                   full_kv_indices=full_kv_indices, q_num_blocks=q_num_blocks,
                   q_indices=q_indices, full_q_num_blocks=full_q_num_blocks,
                   full_q_indices=full_q_indices, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        """The fields in torch's order (sequence lengths and block size split into two
        ints each with ``flatten``)."""
        lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        return (*lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block,
                self.mask_mod)

    @property
    def shape(self):
        """``(*batch dims, Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self):
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __getitem__(self, index):
        """The BlockMask of some batches/heads/query-block rows (an int keeps its dim);
        its ``mask_mod`` is reset to one that raises (it no longer lines up)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Slicing BlockMask with tensor dq_kv_order is not "
                                      "supported yet. Construct a new BlockMask with matching "
                                      "precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        index = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        # an int becomes a length-1 slice, so that every field keeps its number of dims
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
                      if isinstance(i, int) else i for i, n in zip(index, sizes))
        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = (self.full_kv_num_blocks[index], self.full_kv_indices[index])
        out = BlockMask.from_kv_blocks(self.kv_num_blocks[index], self.kv_indices[index], *full,
                                       BLOCK_SIZE=self.BLOCK_SIZE,
                                       mask_mod=_sliced_mask_mod_error,
                                       seq_lengths=self.seq_lengths,
                                       compute_q_blocks=self.q_indices is not None)
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def __repr__(self):
        def shape(x):
            return x.shape if x is not None else None

        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape(self.q_num_blocks)},\n"
                f"    q_indices={shape(self.q_indices)},\n"
                f"    full_q_num_blocks={shape(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                f")")

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped (upper left) to new sequence lengths."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Adjusting BlockMask with tensor dq_kv_order is not "
                                      "supported yet. Construct a new BlockMask with matching "
                                      "precomputed dq_write_order metadata.")
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        kv = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = _adjust_num_blocks_and_indices(self.full_kv_num_blocks,
                                                  self.full_kv_indices, rows, cols)
        out = self.from_kv_blocks(*kv, *full, BLOCK_SIZE=self.BLOCK_SIZE,
                                  mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
                                  compute_q_blocks=self.q_indices is not None)
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def numel(self):
        """Number of elements of the mask (ignoring sparsity)."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """Percentage of the mask's elements in blocks that are skipped."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - size / self.numel())

    def to_dense(self):
        """The block-level mask as a dense int32 tensor ``(*batch, q blocks, kv blocks)``."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                  self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """A picture of the block mask per batch and head (at most ``limit`` of them), each
        cell summarizing a group of blocks: full, empty or partial."""
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def picture(batch_idx):
            lines = f"{batch_idx}\n"
            cur = dense[batch_idx] if batch_idx else dense
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    frac = cur[r:r + row_step, c:c + col_step].float().mean().item()
                    lines += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                lines += "\n"
            return lines

        parts = []
        for i, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific "
                          "batch or head"]
                break
            parts.append(picture(batch_idx))
        return "\n".join(parts)

    def to(self, device):
        """A BlockMask with its tensors on ``device``."""
        tensors = {name: (None if getattr(self, name) is None else getattr(self, name).to(device))
                   for name in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, **tensors, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod, dq_kv_order_spt=self.dq_kv_order_spt)


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                                KV_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                                separate_full_blocks=False):
    """Per block of a boolean (B, H, Q, KV) mask: partly set (and, separately with
    ``separate_full_blocks``, entirely set) as int8 (B, H, Q blocks, KV blocks)."""
    if mask.dtype != glasstorch.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    mask = _broadcast_to_dim(mask, 4)
    pad_kv = _round_up_to_multiple(mask.shape[-1], KV_BLOCK_SIZE) - mask.shape[-1]
    pad_q = _round_up_to_multiple(mask.shape[-2], Q_BLOCK_SIZE) - mask.shape[-2]
    mask = glasstorch.nn.functional.pad(mask, (0, pad_kv, 0, pad_q))
    B, H, Q, KV = mask.shape
    blocks = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE,
                       KV_BLOCK_SIZE).permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full_blocks:
        whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        full = blocks == whole
        partial = (blocks > 0) & (blocks < whole)
        return partial.to(dtype=glasstorch.int8), full.to(dtype=glasstorch.int8)
    return (blocks > 0).to(dtype=glasstorch.int8), None


def or_masks(*mask_mods):
    """A mask_mod keeping what any of ``mask_mods`` keeps."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = glasstorch.zeros((), dtype=glasstorch.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods):
    """A mask_mod keeping what all of ``mask_mods`` keep."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = glasstorch.ones((), dtype=glasstorch.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _index_grids(B, H, M, N, device=None):
    """b, h, q_idx, kv_idx as int64 tensors broadcasting to (B, H, M, N)."""
    def grid(n, dim):
        shape = [1, 1, 1, 1]
        shape[dim] = n
        return glasstorch.arange(n, device=device).view(*shape)

    return grid(B, 0), grid(H, 1), grid(M, 2), grid(N, 3)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The boolean (B, H, Q_LEN, KV_LEN) mask of a mask_mod (or of a score_mod: where it
    does not give ``-inf``); ``B``/``H`` of None mean 1."""
    B = 1 if B is None else B
    H = 1 if H is None else H
    device = "cpu" if device is None else device
    idx = _index_grids(B, H, Q_LEN, KV_LEN, device)
    if _get_mod_type(mod_fn) is _ModificationType.SCORE_MOD:
        out = mod_fn(glasstorch.zeros(B, H, Q_LEN, KV_LEN, device=device), *idx)
        mask = glasstorch.where(glasstorch.isneginf(out), False, True)
    else:
        mask = mod_fn(*idx)
    return mask.expand(B, H, Q_LEN, KV_LEN).contiguous()


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True):
    """The :class:`BlockMask` of ``mask_mod(b, h, q_idx, kv_idx)`` for the given sizes
    (``B``/``H`` of None: shared by all batches/heads), in blocks of ``BLOCK_SIZE`` (an int,
    or (query, key) sizes). With ``separate_full_blocks``, blocks the mask keeps entirely are
    listed apart from partial ones."""
    if _get_mod_type(mask_mod) is not _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    if isinstance(BLOCK_SIZE, int):
        q_block = kv_block = BLOCK_SIZE
    else:
        q_block, kv_block = BLOCK_SIZE
    if _compile:
        # torch compiles the mask creation; here it runs as is (the result is the same)
        warnings.warn("_compile flag on create_block_mask was originally added to work around a "
                      "torch.compile limitation. That limitation has since been addressed. So, "
                      "to compile create_block_mask, we suggest doing "
                      "torch.compile(create_block_mask). This still works for now, but will be "
                      "removed in the future.", DeprecationWarning, stacklevel=2)
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE=q_block,
                                                KV_BLOCK_SIZE=kv_block,
                                                separate_full_blocks=separate_full_blocks)
    kv = _dense_to_ordered(partial)
    full_kv = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(*kv, *full_kv, BLOCK_SIZE=(q_block, kv_block),
                                    mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def _create_empty_block_mask(query, key):
    # one block covering everything: no block-level masking
    return BlockMask.from_kv_blocks(
        kv_num_blocks=glasstorch.ones([1, 1, 1], dtype=glasstorch.int32),
        kv_indices=glasstorch.zeros([1, 1, 1, 1], dtype=glasstorch.int32),
        BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


def _check_kernel_options(kernel_options, want_max):
    options = dict(kernel_options or {})
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError("BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. "
                           "BACKEND supersedes the legacy knob; please drop "
                           "FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.")
    if "BACKEND" in options and options["BACKEND"] not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of "
                         f"{_BACKENDS}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in options:
            raise AssertionError(f"{internal} must not be in kernel_options")
    if options.get("BACKEND") == "FLASH" and want_max:
        raise NotImplementedError("Returning max scores is not supported with BACKEND='FLASH'. "
                                  "Use return_aux=AuxRequest(lse=True) or omit max_scores.")


def _validate_inputs(query, key, value, block_mask, enable_gqa):
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got "
                         f"query.device: {query.device}, key.device: {key.device}, and "
                         f"value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                         f"but got query.dim: {query.dim()}, key.dim: {key.dim()} and "
                         f"value.dim: {value.dim()} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but "
                         f"got E={query.size(-1)} and E={key.size(-1)}.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    hq, hkv = query.size(1), key.size(1)
    if not enable_gqa and hq != hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={hq} and Hkv={hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and hq % hkv:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA "
                         f"but got Hq={hq} and Hkv={hkv}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or "
                             f"non-none block_mask, but got block_mask=None, "
                             f"Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or "
                             f"block_mask and query to have the same batch size, but got "
                             f"Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")


def _check_block_mask_lengths(block_mask, q_len, kv_len):
    if block_mask.BLOCK_SIZE == (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        return  # the no-op mask fits any length
    bq, bkv = block_mask.shape[-2], block_mask.shape[-1]
    head = f"block_mask was created for block_mask.shape={block_mask.shape} but got " \
           f"q_len={q_len} and kv_len={kv_len}. "
    if q_len > bq or kv_len > bkv:
        raise ValueError(head + "As the block mask was created for a smaller length than "
                                "you're using it for, you likely need to create a new block "
                                "mask.")
    if (q_len < bq and kv_len <= bkv) or (q_len <= bq and kv_len < bkv):
        raise ValueError(head + "As the block mask was created for a larger length than you're "
                                "using it for, you can either 1. create a new block mask with "
                                "the correct length, or 2. 'adjust' the existing block mask to "
                                "the correct length by calling block_mask._adjust(q_len, "
                                "kv_len). This essentially 'crops' the block mask to the upper "
                                "left corner, which does not work for all mask_mods!")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """Attention of (B, Hq, L, E) queries over (B, Hkv, S, E) keys and (B, Hkv, S, Ev)
    values with scores ``score_mod(q k^T * scale, b, h, q_idx, kv_idx)`` where
    ``block_mask`` keeps them (``-inf`` elsewhere); rows with nothing kept give zeros.

    ``scale`` defaults to ``1/sqrt(E)``; ``enable_gqa`` shares each key/value head among
    ``Hq // Hkv`` query heads. ``return_aux=AuxRequest(lse=True, max_scores=True)`` also
    returns the per-row log-sum-exp and maximum of the modified scores (``return_lse`` is
    the deprecated form). Computed in float32 (float64 for float64 inputs) up to the
    probabilities, which are cast to the query's dtype for the product with ``value``.
    """
    _validate_inputs(query, key, value, block_mask, enable_gqa)
    if score_mod is None:
        score_mod = _identity
    if block_mask is None:
        block_mask = _create_empty_block_mask(query, key)
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    L, S = query.size(-2), key.size(-2)
    _check_block_mask_lengths(block_mask, L, S)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in "
                   "v2.10. Please use return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    _check_kernel_options(kernel_options, want_max)
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG and not glasstorch.compiler.is_compiling():
        _warn_once("flex_attention_performance",
                   "flex_attention called without torch.compile() - this will use an unfused "
                   "implementation that materializes the full scores matrix instead of "
                   "generating a fused kernel.\n\nglasstorch has no fused flex_attention "
                   "kernel: it always computes it this way. Set "
                   "torch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = "
                   "True to silence this warning.")

    groups = query.size(1) // key.size(1)
    if groups > 1:
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    bq, bkv = query.size(0), key.size(0)
    if not (bq == bkv or (bq > 1 and bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={bq} and Bkv={bkv}")
    key = key.expand(bq, *key.shape[1:])
    value = value.expand(bq, *value.shape[1:])

    work = glasstorch.float64 if query.dtype == glasstorch.float64 else glasstorch.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    idx = _index_grids(bq, query.size(1), L, S)
    # as torch's CPU kernels (compiled or not), only the mask_mod decides: the block layout
    # is a GPU kernel's schedule, not consulted here
    keep = block_mask.mask_mod(*idx)
    modified = glasstorch.where(keep, score_mod(scores, *idx),
                                glasstorch.tensor(float("-inf"), dtype=work))
    if tuple(modified.shape) != tuple(scores.shape):  # a mod that ignores some indices
        modified = modified.expand(scores.shape)
    out = _safe_softmax(modified).to(query.dtype) @ value.to(query.dtype)

    lse = max_scores = None
    if want_lse:
        lse = modified.logsumexp(dim=-1)
        empty = (modified == float("-inf")).all(dim=-1)
        lse = glasstorch.where(empty, float("-inf"), lse)
        # torch's kernels report it in base 2 and convert back: the same rounding
        lse = lse / math.log(2) * math.log(2)
    if want_max:
        max_scores = modified.max(dim=-1).values / math.log(2) * math.log(2)
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
