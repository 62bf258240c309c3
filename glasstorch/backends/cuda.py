"""CUDA backend switches (``glasstorch.backends.cuda.matmul.allow_tf32`` ...)."""


class _MatmulSettings:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulSettings()


def is_built() -> bool:
    return False


def flash_sdp_enabled() -> bool:
    return False


def mem_efficient_sdp_enabled() -> bool:
    return False


def math_sdp_enabled() -> bool:
    return True
