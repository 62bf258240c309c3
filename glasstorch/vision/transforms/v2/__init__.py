"""transforms.v2: transforms that take a whole sample (any nesting of tuples, lists and dicts)
and move images, videos, masks and bounding boxes together, with one draw of the random
parameters per call; labels and other values pass through.

>>> import glasstorch
>>> from glasstorch.vision import tv_tensors
>>> from glasstorch.vision.transforms import v2
>>> img = tv_tensors.Image(glasstorch.zeros(3, 8, 10))
>>> boxes = tv_tensors.BoundingBoxes([[1, 2, 4, 6]], format="XYXY", canvas_size=(8, 10))
>>> out = v2.RandomHorizontalFlip(p=1.0)({"image": img, "boxes": boxes, "label": 3})
>>> out["boxes"].tolist(), out["label"], type(out["image"]).__name__
([[6, 2, 9, 6]], 3, 'Image')
"""
from ..autoaugment import AutoAugmentPolicy
from ..functional import InterpolationMode
from . import functional
from ._container import *  # noqa: F401,F403
from ._container import __all__ as _container_all
from ._from_v1 import *  # noqa: F401,F403
from ._from_v1 import __all__ as _from_v1_all
from ._geometry import *  # noqa: F401,F403
from ._geometry import __all__ as _geometry_all
from ._meta import *  # noqa: F401,F403
from ._meta import __all__ as _meta_all
from ._transform import Transform, get_bounding_boxes, query_chw, query_size
from ._transforms import *  # noqa: F401,F403
from ._transforms import __all__ as _transforms_all
from ._utils import check_type, has_all, has_any

__all__ = ["functional", "Transform", "InterpolationMode", "AutoAugmentPolicy", "check_type",
           "has_any", "has_all", "query_size", "query_chw", "get_bounding_boxes",
           *_container_all, *_from_v1_all, *_geometry_all, *_meta_all, *_transforms_all]
