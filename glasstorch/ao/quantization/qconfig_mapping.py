"""``QConfigMapping``: which qconfig FX graph-mode quantization gives each part of a model, by
module name (exact, then regex), by module type or function, or globally."""

from __future__ import annotations

import re
from collections import OrderedDict

import glasstorch as torch
from glasstorch import nn
from glasstorch.nn import functional as F

from .observer import (
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
)
from .qconfig import QConfig, get_default_qconfig

__all__ = ["QConfigMapping", "get_default_qconfig_mapping"]

_KEYS = ("", "object_type", "module_name_regex", "module_name",
         "module_name_object_type_order")


class QConfigMapping:
    """Qconfigs by global default, object type, module-name regex, module name, and (module
    name, object type, call index); later, more specific settings win."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        """The qconfig of everything no other setting names."""
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        """The qconfig of a module type, function or method name."""
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        """The qconfig of modules whose qualified name matches the regex."""
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        """The qconfig of the module with this qualified name (and what it contains)."""
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        """The qconfig of the ``index``-th call of ``object_type`` inside ``module_name``."""
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def __repr__(self):
        parts = [f"{type(self).__name__} ("]
        for attr in ("global_qconfig", "object_type_qconfigs", "module_name_regex_qconfigs",
                     "module_name_qconfigs", "module_name_object_type_order_qconfigs"):
            value = getattr(self, attr)
            parts.append(f" {attr}")
            if isinstance(value, OrderedDict):
                if value:
                    parts += [f"  {k}: {v}" for k, v in value.items()]
                else:
                    parts.append("  OrderedDict()")
            else:
                parts.append(f"  {value}")
        return "\n".join(parts) + "\n)"

    def to_dict(self):
        """The mapping as the old ``qconfig_dict`` format."""
        return {
            "": self.global_qconfig,
            "object_type": list(self.object_type_qconfigs.items()),
            "module_name_regex": list(self.module_name_regex_qconfigs.items()),
            "module_name": list(self.module_name_qconfigs.items()),
            "module_name_object_type_order": [
                (*k, v) for k, v in self.module_name_object_type_order_qconfigs.items()],
        }

    @classmethod
    def from_dict(cls, qconfig_dict):
        """A QConfigMapping from the old ``qconfig_dict`` format."""
        m = cls()
        if "" in qconfig_dict:
            m.set_global(qconfig_dict[""])
        for t, q in qconfig_dict.get("object_type", []):
            m.set_object_type(t, q)
        for r, q in qconfig_dict.get("module_name_regex", []):
            m.set_module_name_regex(r, q)
        for n, q in qconfig_dict.get("module_name", []):
            m.set_module_name(n, q)
        for n, t, i, q in qconfig_dict.get("module_name_object_type_order", []):
            m.set_module_name_object_type_order(n, t, i, q)
        return m

    def _qconfig_for(self, module_name, object_type):
        """The qconfig a module (or function call inside ``module_name``) gets: exact module
        name, then its parents', then a matching regex, then the object type, then global."""
        name = module_name
        while True:
            if name in self.module_name_qconfigs:
                return self.module_name_qconfigs[name]
            if not name:
                break
            name = name.rpartition(".")[0]
        for regex, q in self.module_name_regex_qconfigs.items():
            if re.match(regex, module_name):
                return q
        if object_type in self.object_type_qconfigs:
            return self.object_type_qconfigs[object_type]
        return self.global_qconfig


def _with_fixed_qparams(mapping, default):
    """Ops whose output range is fixed get observers with those qparams (as torch's default
    mapping gives them), the rest ``default``."""
    fixed = {
        default_fixed_qparams_range_0to1_observer: (
            nn.Sigmoid, torch.sigmoid, "sigmoid", "sigmoid_", nn.Hardsigmoid, F.hardsigmoid,
            "hardsigmoid", "hardsigmoid_", nn.Softmax),
        default_fixed_qparams_range_neg1to1_observer: (nn.Tanh, torch.tanh, "tanh", "tanh_"),
    }
    mapping.set_global(default)
    for observer, kinds in fixed.items():
        qconfig = QConfig(activation=observer, weight=default.weight)
        for kind in kinds:
            mapping.set_object_type(kind, qconfig)
    return mapping


def get_default_qconfig_mapping(backend="x86", version=0):
    """The post-training static quantization mapping for ``backend``."""
    return _with_fixed_qparams(QConfigMapping(), get_default_qconfig(backend, version))

