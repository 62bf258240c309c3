"""Proxy-tensor tracing (torch.fx.experimental.proxy_tensor). glasstorch has no
``make_fx``, so no proxy tracing mode is ever active; libraries ask ``get_proxy_mode``
to know whether they are being traced."""

__all__ = ["get_proxy_mode"]


def get_proxy_mode():
    """The active proxy tracing mode: None, as nothing in glasstorch enters one."""
    return None
